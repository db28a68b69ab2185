# grpc.mk: the gRPC proxy's interop test, included by the Makefile.
#   make test-grpc    triage-demo proxy between grpcio clients and servers
#                     (Debian's python3-grpcio, run by /usr/bin/python3):
#                     the $(BUILD) binary, then the same test on the ASan and
#                     UBSan build (build/san, as test-san makes it)
.PHONY: test-grpc test-grpc-san

# Its peers need messages the rules keep and others they drop: with a schema
# other than the demo's (whose default rules keep every message), run.sh
# judges by has(O) for an optic O it finds (TR_GRPC_OPTICS).
GRPC_ENV := $(if $(DEMO_MODEL),,TR_GRPC_OPTICS="$(OPTICS)")
test-grpc: all $(BUILD)/tests/rawclient
	$(GRPC_ENV) tests/grpc/run.sh $(BUILD)/triage-demo $(BUILD)/tests/rawclient
	$(MAKE) --no-print-directory test-grpc-san

# A client that sends what gRPC libraries never send (malformed messages).
$(BUILD)/tests/rawclient: tests/grpc/rawclient.c $(RUNTIME_OBJ)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(RUNTIME_INC) $< $(RUNTIME_OBJ) -o $@ $(LDFLAGS) $(LDLIBS)

test-grpc-san:
	+$(san_make) $(SAN_BUILD)/triage-demo $(SAN_BUILD)/tests/rawclient
	$(GRPC_ENV) tests/grpc/run.sh $(SAN_BUILD)/triage-demo $(SAN_BUILD)/tests/rawclient
