# grpc.mk: the gRPC proxy's interop test (issue 13), included by the Makefile.
#   make test-grpc    triage-demo proxy between grpcio clients and servers
#                     (Debian's python3-grpcio, run by /usr/bin/python3)
.PHONY: test-grpc

test-grpc: all
	tests/grpc/run.sh $(BUILD)/triage-demo
