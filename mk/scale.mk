# scale.mk: several proxies behind HAProxy, included by the Makefile.
#   make scale-demo   a grpcio server, PROXIES proxies behind HAProxy (run in
#                     the foreground with deploy/haproxy.cfg on free loopback
#                     ports) and a grpcio load generator: each proxy's calls
#                     and messages, and the total rate; then the same with the
#                     C server and load generator of triage-bench grpc-haproxy
#                     (0 to 3 proxies), whose rate is not the client's
#   make test-scale   the same, small, as a check: every call through HAProxy
#                     gets exactly the kept messages, every proxy served calls
.PHONY: scale-demo test-scale

PROXIES ?= 3
scale-demo: all
	deploy/scale.sh $(BUILD)/triage-demo --proxies $(PROXIES) --connections 16 --calls 20
	$(BUILD)/triage-bench grpc-haproxy

test-scale: all
	deploy/scale.sh $(BUILD)/triage-demo --proxies 3 --connections 8 --calls 2 --check
