# Respawn — the commands a developer needs. Everything runs through Maven (pinned in pom.xml).
MVN ?= mvn -B
MAVEN_ARGS ?=
REALAPI ?= ../shared/tools/realapi

.PHONY: build test acceptance crds bench test-realapi mutation clean sandbox image image-tar

## build: the runnable jar, target/respawn.jar
build:
	$(MVN) $(MAVEN_ARGS) -DskipTests package

## test: the whole test suite (unit, property, CRD, scenario; then the acceptance suite against the built jar;
## the real-API-server test runs when RESPAWN_REALAPI_KUBECONFIG points at one, see test-realapi)
test:
	$(MVN) $(MAVEN_ARGS) verify

## acceptance: only the black-box acceptance suite (src/test/java/dev/respawn/acceptance, *IT): the jar
## as a child process against a mock API server, the tests playing kubelet and agent; `make test` runs it too
acceptance:
	$(MVN) $(MAVEN_ARGS) verify -DskipUnitTests=true

## crds: regenerate the committed CRDs from the Java classes: crds/, and the copies the kustomize base
## (deploy/crds/) and the Helm chart (deploy/helm/respawn/crds/) install (tests check all three are equal)
CRD_DIRS = crds deploy/crds deploy/helm/respawn/crds
crds:
	$(MVN) $(MAVEN_ARGS) -DskipTests process-classes
	for d in $(CRD_DIRS); do mkdir -p $$d && rm -f $$d/*.yaml && cp target/classes/crds/*.yaml $$d/ || exit 1; done

## bench: the JMH benchmark of the decision core (target/jmh-result.json), then the load harness against the
## mock API server (dev.respawn.bench.LoadHarness): reaction latency and mass failure next to a bare informer
## loop, restart punctuality, scale to 10,000 instances, heartbeats, writes per restart. Results in
## target/bench/results.md, the same table printed. About 40 minutes on 2 cores; `make bench BENCH=quick` runs
## everything at small sizes in about 15 minutes. README "Performance" has the figures and what they mean.
BENCH ?= full
BENCH_ARGS_quick = -Drespawn.jmh.warmups=1 -Drespawn.jmh.warmup=1s -Drespawn.jmh.iterations=2 -Drespawn.jmh.time=1s
bench:
	$(MVN) $(MAVEN_ARGS) -DskipTests test-compile exec:exec@bench exec:exec@load -Drespawn.bench.mode=$(BENCH) \
	  $(BENCH_ARGS_$(BENCH))

## image: build the container image with Jib and push it (needs a registry you may push to, e.g. after
## `docker login`, and the base image's registry; no Docker daemon): make image IMAGE=REGISTRY/respawn:TAG.
## image-tar: the same image as target/jib-image.tar (`docker load -i` it); needs only the base image's registry.
## Tests never build images (`mvn verify` runs no Jib goal).
IMAGE ?= ghcr.io/respawn-dev/respawn:0.1.0
image:
	$(MVN) $(MAVEN_ARGS) -DskipTests compile jib:build -Dimage=$(IMAGE)

image-tar:
	$(MVN) $(MAVEN_ARGS) -DskipTests compile jib:buildTar -Dimage=$(IMAGE)

## mutation: PIT on the decision core (dev.respawn.policy, its unit tests only): about 4 minutes on 2 cores;
## the report is target/pit-reports/index.html (mutations.xml beside it)
mutation:
	$(MVN) $(MAVEN_ARGS) test-compile org.pitest:pitest-maven:mutationCoverage

## test-realapi: start the real API server from ../shared, run `make test` against it, stop it
test-realapi:
	./.ci/with-realapi $(MAKE) test MAVEN_ARGS="$(MAVEN_ARGS) -Drespawn.requireRealApi=true"

clean:
	$(MVN) clean

## sandbox: the no-cluster sandbox (local API server, operator, simulated kubelet, examples/)
sandbox:
	$(MVN) $(MAVEN_ARGS) -q -Dmaven.test.skip=true package
	java -jar target/respawn.jar sandbox $(SANDBOX_ARGS)
