# bloomguard/Makefile

MODULE_big = bloomguard
OBJS = \
	src/bloomguard.o \
	src/filter.o \
	src/shmem.o \
	src/slot.o \
	src/wal.o \
	src/persist.o \
	src/feed.o \
	src/registry.o \
	src/pending.o \
	src/statement.o \
	src/keys.o \
	src/keycache.o \
	src/sizing.o \
	src/partition.o \
	src/coverage.o \
	src/build.o \
	src/trigger.o \
	src/args.o \
	src/source.o \
	src/lookup.o \
	src/planner.o \
	src/guardscan.o \
	src/maintain.o \
	src/worker.o \
	src/attach.o \
	src/stats.o

EXTENSION = bloomguard
DATA = sql/bloomguard--1.0.sql sql/bloomguard--1.0--1.1.sql sql/bloomguard--1.1--1.2.sql
PGFILEDESC = "bloomguard - Bloom filter guard for primary key lookups"

REGRESS = attach types writepaths lookup untyped security errors health layout build coverage hardening planner partition upgrade
REGRESS_OPTS = --temp-config=$(CURDIR)/test/bloomguard.conf --temp-instance=./tmp_check

ISOLATION = attach_race rebuild_race attach_deadlock planner_race partition_race partition_midstatement feed_buffer
ISOLATION_OPTS = --temp-config=$(CURDIR)/test/bloomguard.conf --temp-instance=./tmp_check_iso --inputdir=test/isolation --outputdir=output_iso

TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

PG_CPPFLAGS = -I$(srcdir)/src
SHLIB_LINK =

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# One suite at a time, so that a failing suite does not hide the others.
.PHONY: installcheck-regress installcheck-isolation installcheck-tap
installcheck-regress:
	$(pg_regress_installcheck) $(REGRESS_OPTS) $(REGRESS)

installcheck-isolation:
	$(pg_isolation_regress_installcheck) $(ISOLATION_OPTS) $(ISOLATION)

installcheck-tap:
	$(prove_installcheck)
