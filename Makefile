# bloomguard/Makefile

MODULE_big = bloomguard
OBJS = \
	src/filter.o \
	src/pool.o \
	src/shmem.o \
	src/slot.o \
	src/wal.o \
	src/walredo.o \
	src/persist.o \
	src/feedbuffer.o \
	src/registry.o \
	src/tablekind.o \
	src/pending.o \
	src/statement.o \
	src/keys.o \
	src/feedcheck.o \
	src/keycache.o \
	src/sizing.o \
	src/partition.o \
	src/ddlwatch.o \
	src/buildscan.o \
	src/build.o \
	src/rebuild.o \
	src/trigger.o \
	src/args.o \
	src/tablelookup.o \
	src/trust.o \
	src/citusask.o \
	src/lookup.o \
	src/planner.o \
	src/guardscan.o \
	src/citus.o \
	src/maintain.o \
	src/worker.o \
	src/launcher.o \
	src/attach.o \
	src/stats.o \
	src/module.o

EXTENSION = bloomguard
DATA = sql/bloomguard--1.0.sql sql/bloomguard--1.0--1.1.sql sql/bloomguard--1.1--1.2.sql sql/bloomguard--1.2--1.3.sql
PGFILEDESC = "bloomguard - Bloom filter guard for primary key lookups"

REGRESS = attach attach_block types writepaths lookup untyped security errors elsewhere health layout build coverage hardening planner shapes workers partition cascade upgrade discard
REGRESS_OPTS = --temp-config=$(CURDIR)/test/bloomguard.conf --temp-instance=./tmp_check

ISOLATION = attach_race attach_block rebuild_race attach_deadlock planner_race partition_race partition_midstatement feed_buffer
ISOLATION_OPTS = --temp-config=$(CURDIR)/test/bloomguard.conf --temp-instance=./tmp_check_iso --inputdir=test/isolation --outputdir=output_iso

# sql/discard.sql again with debug_discard_caches = 1 (assert-enabled
# servers only; test/run-all.sh --assert).  planner and lookup themselves
# would take hours so: every lookup there reads the catalogs afresh.
DISCARD_REGRESS = discard
DISCARD_OPTS = --temp-config=$(CURDIR)/test/bloomguard.conf --temp-config=$(CURDIR)/test/discard-caches.conf --temp-instance=./tmp_check_discard --outputdir=output_discard
EXTRA_CLEAN = output_discard tmp_check_discard

TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

# The suites above run in throwaway instances with test/bloomguard.conf
# (test/run-all.sh: installcheck-regress, installcheck-isolation,
# installcheck-tap).  Plain `make installcheck` is what a packager runs
# (pg_buildext installcheck, debian/tests): against the server it is given,
# which preloads bloomguard and has every other setting at its default, the
# regression tests that need nothing more.  Left out: attach, attach_block
# and coverage (PREPARE TRANSACTION, which needs max_prepared_transactions
# > 0).
NO_INSTALLCHECK = 1
INSTALLCHECK_REGRESS = $(filter-out attach attach_block coverage,$(REGRESS))

PG_CPPFLAGS = -I$(srcdir)/src
SHLIB_LINK =

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The extension's version (bloomguard.control) and the distribution's
# (PGXN wants three parts: 1.1 is 1.1.0).
EXTVERSION := $(shell sed -n "s/^default_version = '\\(.*\\)'/\\1/p" $(srcdir)/bloomguard.control)
DISTVERSION = $(EXTVERSION).0

.PHONY: installcheck dist meta
installcheck:
	$(pg_regress_installcheck) --dbname=$(CONTRIB_TESTDB) $(INSTALLCHECK_REGRESS)

# META.json's versions from bloomguard.control (after a new extension
# version; debian/changelog needs its own entry: dch -v X.Y.0-1)
meta:
	python3 $(srcdir)/test/check-meta.py $(srcdir) --update

# bloomguard-X.Y.0.zip for PGXN, from the committed tree; META.json must
# name the same version (test/check-meta.py checks it and the rest)
dist:
	python3 $(srcdir)/test/check-meta.py $(srcdir)
	git -C $(srcdir) archive --format zip --prefix=bloomguard-$(DISTVERSION)/ -o $(CURDIR)/bloomguard-$(DISTVERSION).zip HEAD
	python3 $(srcdir)/test/check-meta.py $(srcdir) --zip $(CURDIR)/bloomguard-$(DISTVERSION).zip

# The house rules the compiler does not check: test/check-layers.py on the
# sources (calls only down the module map, a comment above every
# function), test/check-symbols.py on the objects (no global read across
# files without a reason stated where it is defined); test/run-all.sh's
# layers suite runs it.
.PHONY: check-layers
check-layers: $(OBJS)
	python3 $(srcdir)/test/check-layers.py
	python3 $(srcdir)/test/check-symbols.py

# One suite at a time, so that a failing suite does not hide the others.
.PHONY: installcheck-regress installcheck-isolation installcheck-tap installcheck-discard
installcheck-regress:
	$(pg_regress_installcheck) $(REGRESS_OPTS) $(REGRESS)

installcheck-discard:
	$(pg_regress_installcheck) $(DISCARD_OPTS) $(DISCARD_REGRESS)

installcheck-isolation:
	$(pg_isolation_regress_installcheck) $(ISOLATION_OPTS) $(ISOLATION)

installcheck-tap:
	$(prove_installcheck)
