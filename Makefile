# bloomguard/Makefile

MODULE_big = bloomguard
OBJS = \
	src/bloomguard.o \
	src/filter.o \
	src/shmem.o \
	src/keys.o \
	src/build.o \
	src/trigger.o \
	src/lookup.o \
	src/attach.o \
	src/registry.o

EXTENSION = bloomguard
DATA = sql/bloomguard--1.0.sql
PGFILEDESC = "bloomguard - Bloom filter guard for primary key lookups"

REGRESS = attach types writepaths lookup security errors
REGRESS_OPTS = --temp-config=$(top_srcdir)/test/bloomguard.conf --temp-instance=./tmp_check

ISOLATION = attach_race
ISOLATION_OPTS = --temp-config=$(top_srcdir)/test/bloomguard.conf --temp-instance=./tmp_check_iso --inputdir=test/isolation --outputdir=output_iso

TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

PG_CPPFLAGS = -I$(srcdir)/src
SHLIB_LINK =

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# pgxs's top_srcdir points into the installation; our configs live here
top_srcdir = .
