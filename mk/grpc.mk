# grpc.mk: the gRPC proxy's interop test (issue 13), included by the Makefile.
#   make test-grpc    triage-demo proxy between grpcio clients and servers
#                     (Debian's python3-grpcio, run by /usr/bin/python3):
#                     the $(BUILD) binary, then the same test on the ASan and
#                     UBSan build (build/san, as test-san makes it)
.PHONY: test-grpc test-grpc-san

# (its peers need messages the rules drop: written for the demo's)
ifneq ($(DEMO_MODEL),)
test-grpc: all $(BUILD)/tests/rawclient
	tests/grpc/run.sh $(BUILD)/triage-demo $(BUILD)/tests/rawclient
	$(MAKE) --no-print-directory test-grpc-san
else
test-grpc:
	$(demo_skip)
endif

# A client that sends what gRPC libraries never send (malformed messages).
$(BUILD)/tests/rawclient: tests/grpc/rawclient.c $(RUNTIME_OBJ)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(RUNTIME_INC) $< $(RUNTIME_OBJ) -o $@ $(LDFLAGS) $(LDLIBS)

test-grpc-san:
	+$(san_make) $(SAN_BUILD)/triage-demo $(SAN_BUILD)/tests/rawclient
	tests/grpc/run.sh $(SAN_BUILD)/triage-demo $(SAN_BUILD)/tests/rawclient
