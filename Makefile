# Respawn — the commands a developer needs. Everything runs through Maven (pinned in pom.xml).
MVN ?= mvn -B
MAVEN_ARGS ?=
REALAPI ?= ../shared/tools/realapi

.PHONY: build test crds bench test-realapi clean

## build: the runnable jar, target/respawn.jar
build:
	$(MVN) $(MAVEN_ARGS) -DskipTests package

## test: the whole test suite (unit, property, CRD, scenario; the real-API-server test runs when
## RESPAWN_REALAPI_KUBECONFIG points at one, see test-realapi)
test:
	$(MVN) $(MAVEN_ARGS) verify

## crds: regenerate the committed CRDs in crds/ (and deploy/) from the Java classes
crds:
	$(MVN) $(MAVEN_ARGS) -DskipTests process-classes
	cp target/classes/crds/*.yaml crds/

## bench: JMH benchmark of the decision core; results in target/jmh-result.json
bench:
	$(MVN) $(MAVEN_ARGS) -DskipTests test-compile exec:exec@bench

## test-realapi: start the real API server from ../shared, run `make test` against it, stop it
test-realapi:
	./.ci/with-realapi $(MAKE) test MAVEN_ARGS="$(MAVEN_ARGS) -Drespawn.requireRealApi=true"

clean:
	$(MVN) clean
