# install.mk: the library a program links, and the install (docs/library.md),
# included by the Makefile.
#   make install PREFIX=DIR [DESTDIR=STAGE]   (PREFIX: /usr/local by default)
#       bin/triage-gen, bin/triage-demo, bin/triage-bench, bin/triage-rulesc
#       lib/libtriage.a          the runtime and the code generated for $(SCHEMA)
#       lib/pkgconfig/triage.pc  cc prog.c $(pkg-config --cflags --libs triage)
#       include/triage/          the public headers, and every header they or the
#                                generated C include
#       share/triage/            the generator (trgen/, templates/, version.h)
#                                and the schema the library was generated from
#   make uninstall PREFIX=DIR [DESTDIR=STAGE]
#   make lib            $(BUILD)/libtriage.a alone
#   make test-install   installs into a temporary folder, then builds and runs
#                       examples/filter.c against it as a user would
#                       (tests/install/run.sh)
.PHONY: install uninstall lib test-install

PREFIX ?= /usr/local
DESTDIR ?=
bindir = $(PREFIX)/bin
libdir = $(PREFIX)/lib
includedir = $(PREFIX)/include
datadir = $(PREFIX)/share
AR ?= ar
INSTALL ?= install

LIB_A := $(BUILD)/libtriage.a

# What a program includes (docs/library.md). The install adds every header
# these include, and every header the generated C includes (so that code
# triage-gen writes for another schema compiles against the install), as
# the compiler finds them.
PUBLIC_H := $(GEN)/tr_model.h $(GEN)/tr_optics.h runtime/policy.h runtime/rules.h \
            runtime/optic.h runtime/frames.h runtime/gzip.h runtime/jsonvalid.h runtime/version.h \
            runtime/h2proxy.h runtime/rules_compiled.h $(GEN)/tr_optics_thunks.h

lib: $(LIB_A)

$(LIB_A): $(RUNTIME_OBJ) $(GEN_OBJ)
	$(call say,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# LDLIBS as the Makefile has it when the recipe runs, so the .pc names
# every library the runtime links.
install: all $(LIB_A) $(BUILD)/triage-rulesc
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(libdir)/pkgconfig \
	  $(DESTDIR)$(includedir)/triage $(DESTDIR)$(datadir)/triage/trgen \
	  $(DESTDIR)$(datadir)/triage/templates
	$(INSTALL) -m 755 $(BUILD)/triage-demo $(BUILD)/triage-bench $(BUILD)/triage-rulesc \
	  scripts/triage-gen \
	  $(DESTDIR)$(bindir)/
	$(INSTALL) -m 644 $(LIB_A) $(DESTDIR)$(libdir)/
	$(INSTALL) -m 644 $$({ printf '#include "%s"\n' $(notdir $(PUBLIC_H)) | \
	  $(CC) -std=c11 -MM -Iruntime -I$(GEN) -x c -; \
	  $(CC) -std=c11 -MM -Iruntime -I$(GEN) $(GEN_C); } | \
	  tr ' \\' '\n\n' | grep '\.h$$' | sort -u) \
	  $(DESTDIR)$(includedir)/triage/
	$(INSTALL) -m 644 gen/trgen/*.py $(DESTDIR)$(datadir)/triage/trgen/
	$(INSTALL) -m 644 gen/templates/*.j2 $(DESTDIR)$(datadir)/triage/templates/
	$(INSTALL) -m 644 runtime/version.h $(SCHEMA) $(DESTDIR)$(datadir)/triage/
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' \
	  'includedir=$${prefix}/include' '' 'Name: triage' \
	  'Description: filter JSON messages on a gRPC stream without decoding them' \
	  "Version: $$(sed -n 's/^#define TR_VERSION "\(.*\)"$$/\1/p' runtime/version.h)" \
	  'Cflags: -I$${includedir}/triage' \
	  'Libs: -L$${libdir} -ltriage $(strip $(LDLIBS))' \
	  >$(DESTDIR)$(libdir)/pkgconfig/triage.pc

uninstall:
	rm -f $(DESTDIR)$(bindir)/triage-gen $(DESTDIR)$(bindir)/triage-demo \
	  $(DESTDIR)$(bindir)/triage-bench $(DESTDIR)$(bindir)/triage-rulesc \
	  $(DESTDIR)$(libdir)/libtriage.a \
	  $(DESTDIR)$(libdir)/pkgconfig/triage.pc
	rm -rf $(DESTDIR)$(includedir)/triage $(DESTDIR)$(datadir)/triage

# (any schema: the rules it checks the example by are chosen for the schema)
test-install: all
	tests/install/run.sh "$(MAKE)" $(BUILD) $(SCHEMA) $(if $(DEMO_MODEL),demo,other)
