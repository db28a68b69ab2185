# grpc.mk: the gRPC proxy's interop test (issue 13), included by the Makefile.
#   make test-grpc    triage-demo proxy between grpcio clients and servers
#                     (Debian's python3-grpcio, run by /usr/bin/python3):
#                     the $(BUILD) binary, then the same test on the ASan and
#                     UBSan build (build/san, as test-san makes it)
.PHONY: test-grpc test-grpc-san

test-grpc: all
	tests/grpc/run.sh $(BUILD)/triage-demo
	$(MAKE) --no-print-directory test-grpc-san

GRPC_SAN_BUILD ?= build/san
test-grpc-san:
	$(MAKE) --no-print-directory BUILD=$(GRPC_SAN_BUILD) OPT=-O1 CC=clang \
	  SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  $(GRPC_SAN_BUILD)/triage-demo
	tests/grpc/run.sh $(GRPC_SAN_BUILD)/triage-demo
