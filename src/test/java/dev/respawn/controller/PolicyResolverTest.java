package dev.respawn.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.AgentInstanceSpec;
import dev.respawn.api.v1alpha1.AgentRestartPolicy;
import dev.respawn.api.v1alpha1.AgentRestartPolicySpec;
import dev.respawn.api.v1alpha1.BackoffType;
import dev.respawn.policy.Tier;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class PolicyResolverTest {
  private static AgentInstance withoutPolicyRef() {
    AgentInstance i = new AgentInstance();
    i.setMetadata(new ObjectMetaBuilder().withNamespace("agents").withName("coder").build());
    i.setSpec(new AgentInstanceSpec());
    return i;
  }

  @Test
  void theBuiltInDefaultsObeyTheTierLikeAnyPolicy() {
    PolicyResolver core = new PolicyResolver(OperatorSettings.defaults().withTier(Tier.Core), id -> Optional.empty());
    assertThat(core.resolve(withoutPolicyRef()).policy()).hasValueSatisfying(p ->
        assertThat(p.backoff().type()).isEqualTo(BackoffType.None));

    PolicyResolver enterprise = new PolicyResolver(OperatorSettings.defaults().withTier(Tier.Enterprise),
        id -> Optional.empty());
    assertThat(enterprise.resolve(withoutPolicyRef()).policy()).hasValueSatisfying(p ->
        assertThat(p.backoff().type()).isEqualTo(BackoffType.Exponential));
  }

  @Test
  void aMissingDefaultPolicySaysItIsTheFlagsForItWasNeverNamedByTheInstance() {
    PolicyResolver resolver = new PolicyResolver(OperatorSettings.defaults().withDefaultPolicy("dflt"),
        id -> Optional.empty());
    assertThat(resolver.resolve(withoutPolicyRef()).message()).isEqualTo("AgentRestartPolicy agents/dflt (the "
        + "operator's --default-policy: spec.policyRef is not set) does not exist; nothing is restarted until it does");
    AgentInstance named = withoutPolicyRef();
    named.getSpec().policyRef = new dev.respawn.api.v1alpha1.PolicyReference();
    named.getSpec().policyRef.name = "standard";
    assertThat(resolver.resolve(named).message())
        .isEqualTo("AgentRestartPolicy agents/standard does not exist; nothing is restarted until it does");
  }

  private static AgentRestartPolicy policy(ObjectMeta meta, String spec) {
    AgentRestartPolicy p = new AgentRestartPolicy();
    p.setMetadata(meta);
    p.setSpec(Serialization.unmarshal(spec, AgentRestartPolicySpec.class));
    return p;
  }

  private static ObjectMeta meta(String name, String uid, long generation) {
    return new ObjectMetaBuilder().withNamespace("agents").withName(name).withUid(uid).withGeneration(generation)
        .build();
  }

  /**
   * A default policy of another namespace serves an instance outside its fleet: the instance's failures do not open
   * its shared circuits (OutsideTheFleetTest); an instance of the policy's own namespace is of the fleet.
   */
  @Test
  void aDefaultPolicyOfAnotherNamespaceServesTheInstanceOutsideItsFleet() {
    AgentRestartPolicy base = policy(new ObjectMetaBuilder().withNamespace("w1").withName("base").withUid("u-base")
        .withGeneration(1L).build(), "{\"dependencies\": [{\"name\": \"model-api\", \"match\": "
        + "{\"messageContains\": [\"HTTP 503\"]}}]}");
    PolicyResolver resolver = new PolicyResolver(OperatorSettings.defaults().withDefaultPolicy("w1/base"),
        id -> id.equals(ResourceID.fromResource(base)) ? Optional.of(base) : Optional.empty());
    AgentInstance elsewhere = withoutPolicyRef();
    elsewhere.getMetadata().setNamespace("w2");
    assertThat(resolver.resolve(elsewhere).policy()).hasValueSatisfying(p -> assertThat(p.dependencies())
        .singleElement().satisfies(d -> assertThat(d.fleetMember()).isFalse()));
    AgentInstance own = withoutPolicyRef();
    own.getMetadata().setNamespace("w1");
    assertThat(resolver.resolve(own).policy()).hasValueSatisfying(p -> assertThat(p.dependencies())
        .singleElement().satisfies(d -> assertThat(d.fleetMember()).isTrue()));
  }

  /** An edit compiles anew, once; a policy made anew under its name too; a deleted one's entry is dropped. */
  @Test
  void aPolicyIsCompiledOncePerGenerationAndKeptOncePerName() {
    Map<ResourceID, AgentRestartPolicy> store = new ConcurrentHashMap<>();
    PolicyResolver resolver = new PolicyResolver(OperatorSettings.defaults(), id -> Optional.ofNullable(store.get(id)));
    AgentRestartPolicy first = policy(meta("fleet", "uid-1", 1), "maxRetries: 3");
    PolicyResolver.Resolved one = resolver.compile(first);
    assertThat(resolver.compile(first)).isSameAs(one);
    AgentRestartPolicy edited = policy(meta("fleet", "uid-1", 2), "maxRetries: 7");
    PolicyResolver.Resolved two = resolver.compile(edited);
    assertThat(two.policy()).hasValueSatisfying(p -> assertThat(p.maxRetries()).isEqualTo(7));
    assertThat(resolver.compile(edited)).as("generation 2 is kept").isSameAs(two);
    AgentRestartPolicy remade = policy(meta("fleet", "uid-2", 1), "maxRetries: 1");
    assertThat(resolver.compile(remade).policy()).hasValueSatisfying(p -> assertThat(p.maxRetries()).isEqualTo(1));
    assertThat(resolver.compiledPolicies()).isEqualTo(1);

    AgentInstance user = withoutPolicyRef();
    user.getSpec().policyRef = new dev.respawn.api.v1alpha1.PolicyReference("fleet");
    assertThat(resolver.resolve(user).reason()).isEqualTo(Refusal.PolicyNotFound);
    assertThat(resolver.compiledPolicies()).as("the deleted policy's entry").isZero();
    resolver.compile(remade);
    assertThat(resolver.forget(ResourceID.fromResource(remade))).as("its delete event is told on").isTrue();
    assertThat(resolver.compiledPolicies()).as("dropped at the policy's delete event").isZero();
  }

  /**
   * Two policies edited at once (one {@code kubectl apply -f policies/}) are compiled by two reconcile threads whose
   * compiles overlap: both return. The compile once dropped older generations from inside the map's
   * {@code computeIfAbsent}, holding one bin's lock while it took others: two such compiles whose bins crossed
   * waited for each other for ever, and every reconcile of their instances behind them. The metadata here holds each
   * compile, at its second look at the uid (from within the map), until the other one is inside too; the uids are
   * ones whose keys of that time ({@code uid@generation}, a 16-bin table) crossed.
   */
  @Test
  void twoPoliciesEditedAtOnceAreBothCompiled() throws Exception {
    String p = null;
    String q = null;
    for (int i = 0; q == null; i++) {
      if (bin(uid(i) + "@1") == bin(uid(i) + "@2")) {
        continue;
      }
      for (int j = 1_000_000; j < 1_000_400 && q == null; j++) {
        if (bin(uid(j) + "@1") == bin(uid(i) + "@2") && bin(uid(j) + "@2") == bin(uid(i) + "@1")) {
          p = uid(i);
          q = uid(j);
        }
      }
    }
    PolicyResolver resolver = new PolicyResolver(OperatorSettings.defaults(), id -> Optional.empty());
    resolver.compile(policy(new Meeting(p, 1, null, null), "{}"));
    resolver.compile(policy(new Meeting(q, 1, null, null), "{}"));
    CountDownLatch pInside = new CountDownLatch(1);
    CountDownLatch qInside = new CountDownLatch(1);
    AgentRestartPolicy p2 = policy(new Meeting(p, 2, pInside, qInside), "{}");
    AgentRestartPolicy q2 = policy(new Meeting(q, 2, qInside, pInside), "{}");
    CompletableFuture<Object> first = new CompletableFuture<>();
    CompletableFuture<Object> second = new CompletableFuture<>();
    Thread a = new Thread(() -> first.complete(resolver.compile(p2)), "reconciler-a");
    Thread b = new Thread(() -> second.complete(resolver.compile(q2)), "reconciler-b");
    a.setDaemon(true); // left blocked for good if they wait for each other
    b.setDaemon(true);
    a.start();
    b.start();
    await("both compiles returned").atMost(Duration.ofSeconds(10)).until(() -> first.isDone() && second.isDone());
  }

  /**
   * A policy compiled at its generation is read without waiting for a compile under way in its bin: an instance of an
   * unchanged policy is not held up by an edit being compiled. The edit's compile is held inside the map here (its
   * second look at the uid) until the read has returned.
   */
  @Test
  void aCompiledPolicyIsReadWhileAnEditIsBeingCompiled() throws Exception {
    String uid = uid(7);
    PolicyResolver resolver = new PolicyResolver(OperatorSettings.defaults(), id -> Optional.empty());
    AgentRestartPolicy first = policy(new Meeting(uid, 1, null, null), "{}");
    PolicyResolver.Resolved compiledFirst = resolver.compile(first);
    CountDownLatch editInside = new CountDownLatch(1);
    CountDownLatch readDone = new CountDownLatch(1);
    AgentRestartPolicy edit = policy(new Meeting(uid, 2, editInside, readDone), "{\"maxRetries\": 1}");
    CompletableFuture<PolicyResolver.Resolved> editCompiled = new CompletableFuture<>();
    Thread editor = new Thread(() -> editCompiled.complete(resolver.compile(edit)), "reconciler-edit");
    editor.setDaemon(true);
    editor.start();
    assertThat(editInside.await(10, TimeUnit.SECONDS)).as("the edit's compile is inside the map").isTrue();

    PolicyResolver.Resolved read = resolver.compile(first);
    boolean editStillHeld = !editCompiled.isDone();
    readDone.countDown();

    assertThat(read).isSameAs(compiledFirst);
    assertThat(editStillHeld).as("the read returned while the edit's compile still held its bin").isTrue();
    await("the edit compiled").atMost(Duration.ofSeconds(10)).until(editCompiled::isDone);
    assertThat(editCompiled.get().policy()).hasValueSatisfying(p -> assertThat(p.maxRetries()).isEqualTo(1));
  }

  private static int bin(String key) {
    int h = key.hashCode();
    return (h ^ (h >>> 16)) & 15;
  }

  private static String uid(int i) {
    return "7c9e6679-7425-40de-944b-" + String.format("%012d", i);
  }

  /** Metadata whose uid, read a second time, waits (at most 20 s) until the other latch is counted down. */
  private static final class Meeting extends ObjectMeta {
    private final AtomicInteger reads = new AtomicInteger();
    private final transient CountDownLatch inside;
    private final transient CountDownLatch other;

    Meeting(String uid, long generation, CountDownLatch inside, CountDownLatch other) {
      setNamespace("agents");
      setName("p-" + uid.substring(uid.length() - 4));
      setUid(uid);
      setGeneration(generation);
      this.inside = inside;
      this.other = other;
    }

    @Override
    public String getUid() {
      if (inside != null && reads.incrementAndGet() == 2) {
        inside.countDown();
        try {
          other.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return super.getUid();
    }
  }
}
