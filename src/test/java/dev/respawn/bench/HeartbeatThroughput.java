package dev.respawn.bench;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.HealthVerdict;
import dev.respawn.controller.LeaseRenewalFilter;
import dev.respawn.heartbeat.HeartbeatLeases;
import dev.respawn.heartbeat.RenewalClock;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Heartbeats. In-process: how many Lease renewals per second the operator's heartbeat path absorbs on
 * one informer thread (the production {@link LeaseRenewalFilter}, alone and with the JSON decoding of
 * the watch event before it). On the mock: the fleet's Leases renewed at a steady rate (a JSON merge
 * patch of renewTime, as an agent renews), and how many reconciles those pure renewals caused.
 */
final class HeartbeatThroughput {
  static final String NAME = "heartbeats";
  static final int LEASES = 1000;
  static final int RENEWALS_PER_LEASE = 16;
  static final long WARM_UP_STEPS = 200_000;

  private HeartbeatThroughput() {}

  static void inProcess(Plan plan, Results results) {
    Lease[][] renewals = new Lease[LEASES][RENEWALS_PER_LEASE];
    String[][] events = new String[LEASES][RENEWALS_PER_LEASE];
    ZonedDateTime start = ZonedDateTime.now(ZoneOffset.UTC);
    for (int l = 0; l < LEASES; l++) {
      AgentInstance owner = AgentFleet.instance(AgentFleet.AGENTS, "agent-" + l, null);
      owner.getMetadata().setUid("uid-" + l);
      Lease lease = HeartbeatLeases.newLease(owner, new OwnerReference("respawn.dev/v1alpha1", true, true,
          "AgentInstance", owner.getMetadata().getName(), "uid-" + l));
      lease.getMetadata().setAnnotations(Map.of(HeartbeatLeases.HEALTH, "Healthy"));
      lease.getSpec().setHolderIdentity("agent-" + l + "-1");
      for (int r = 0; r < RENEWALS_PER_LEASE; r++) {
        lease.getMetadata().setResourceVersion(Integer.toString(l * RENEWALS_PER_LEASE + r));
        lease.getSpec().setRenewTime(start.plusNanos(r * 1_000_000_000L + l * 1000L));
        renewals[l][r] = Serialization.clone(lease);
        events[l][r] = "{\"type\":\"MODIFIED\",\"object\":" + Serialization.asJson(lease) + "}";
      }
    }
    RenewalClock clock = new RenewalClock(InstantSource.system());
    LeaseRenewalFilter filter = new LeaseRenewalFilter(clock);
    long measureNanos = plan.inProcessMillis() * 1_000_000L;
    double filterOnly = rate(measureNanos, n -> {
      int l = (int) (n % LEASES);
      int r = (int) (n / LEASES % RENEWALS_PER_LEASE);
      return filter.accept(renewals[l][r], renewals[l][(r + RENEWALS_PER_LEASE - 1) % RENEWALS_PER_LEASE]);
    });
    double withDecoding = rate(measureNanos, n -> {
      int l = (int) (n % LEASES);
      int r = (int) (n / LEASES % RENEWALS_PER_LEASE);
      Lease newer = Serialization.unmarshal(events[l][r], io.fabric8.kubernetes.api.model.WatchEvent.class)
          .getObject() instanceof Lease decoded ? decoded : null;
      return filter.accept(newer, renewals[l][(r + RENEWALS_PER_LEASE - 1) % RENEWALS_PER_LEASE]);
    });
    results.info(NAME, "renewals absorbed per second in-process, one thread: filter only",
        String.format(Locale.ROOT, "%,.0f /s", filterOnly));
    results.info(NAME, "… with the watch event's JSON decoding", String.format(Locale.ROOT, "%,.0f /s",
        withDecoding));
    results.note(NAME, "in-process: " + LEASES + " Leases renewed round-robin through the production "
        + "LeaseRenewalFilter (RenewalClock.observe + meaningfulChange), " + plan.inProcessMillis()
        + " ms measured after as long a warm-up, on one thread like an informer's");
  }

  /**
   * Calls the step with 0, 1, 2, ... for a warm-up (as long as the measurement, and at least
   * {@value #WARM_UP_STEPS} steps: the JIT needs them) and then a measured period; steps per second.
   */
  private static double rate(long nanos, java.util.function.LongPredicate step) {
    long sink = 0;
    long n = 0;
    for (int phase = 0; phase < 2; phase++) {
      long count = 0;
      long t0 = System.nanoTime();
      long elapsed;
      do {
        for (int k = 0; k < 1000; k++) {
          sink += step.test(n++) ? 1 : 0;
        }
        count += 1000;
        elapsed = System.nanoTime() - t0;
      } while (elapsed < nanos || (phase == 0 && count < WARM_UP_STEPS));
      if (phase == 1) {
        if (sink == Long.MIN_VALUE) {
          System.out.print(""); // keeps the results alive
        }
        return count * 1e9 / elapsed;
      }
    }
    throw new AssertionError();
  }

  /** Renewals on the mock server: do pure renewals cause reconciles? */
  static void onMock(AgentFleet fleet, Plan plan, Results results) {
    List<String> instances = fleet.immediate.subList(0, Math.min(plan.heartbeatLeases(), fleet.immediate.size()));
    var leases = fleet.harness.leases().inNamespace(AgentFleet.AGENTS);
    AgentFleet.inParallel(instances, i -> leases.withName(i).patch(PatchContext.of(PatchType.JSON_MERGE),
        "{\"metadata\":{\"annotations\":{\"" + HeartbeatLeases.HEALTH + "\":\"Healthy\"}},\"spec\":{"
            + "\"holderIdentity\":\"" + fleet.livePod(AgentFleet.AGENTS, i).getMetadata().getName()
            + "\",\"renewTime\":\"" + microTime(Instant.now()) + "\"}}"));
    Observer.require("every primed instance reports a Healthy heartbeat", Duration.ofMinutes(2),
        () -> instances.stream().allMatch(i -> fleet.observer.instance(i).map(AgentInstance::getStatus)
            .map(s -> s.heartbeat != null && s.heartbeat.verdict == HealthVerdict.Healthy).orElse(false)));
    MassFailure.awaitQuiet(fleet, Duration.ofSeconds(1), Duration.ofMinutes(1));

    long reconciles0 = fleet.sink.reconciles();
    long writes0 = fleet.operatorWrites();
    AtomicLong renewed = new AtomicLong();
    long periodNanos = 1_000_000_000L / plan.renewalsPerSecond();
    long t0 = System.nanoTime();
    long end = t0 + plan.heartbeatWindow().toNanos();
    for (long n = 0; System.nanoTime() < end; n++) {
      long due = t0 + n * periodNanos;
      while (System.nanoTime() < due) {
        Thread.onSpinWait();
      }
      String lease = instances.get((int) (n % instances.size()));
      leases.withName(lease).patch(PatchContext.of(PatchType.JSON_MERGE),
          "{\"spec\":{\"renewTime\":\"" + microTime(Instant.now()) + "\"}}");
      renewed.incrementAndGet();
    }
    double achieved = renewed.get() * 1e9 / (System.nanoTime() - t0);
    MassFailure.awaitQuiet(fleet, Duration.ofSeconds(1), Duration.ofMinutes(1));
    long reconciles = fleet.sink.reconciles() - reconciles0;
    long writes = fleet.operatorWrites() - writes0;
    RenewalClock clock = fleet.operator().instanceReconciler().renewals();
    long tracked = fleet.harness.leases().inNamespace(AgentFleet.AGENTS).list().getItems().stream()
        .filter(l -> instances.contains(l.getMetadata().getName())).filter(l -> clock.seenAt(l) != null).count();
    results.goal(NAME, String.format(Locale.ROOT, "reconciles caused by %,d pure renewals on the mock",
        renewed.get()), reconciles + " (" + writes + " writes)", "0", reconciles == 0);
    results.note(NAME, String.format(Locale.ROOT, "on the mock: %d Leases held by their running pods, renewed "
        + "round-robin at %.0f/s for %s (the mock's write rate bounds this, not the operator); afterwards the "
        + "operator had seen the latest renewTime of %d of %d Leases", instances.size(), achieved,
        plan.heartbeatWindow().toSeconds() + " s", tracked, instances.size()));
  }

  /** Kubernetes MicroTime: RFC 3339 with microseconds. */
  static String microTime(Instant t) {
    return java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX")
        .format(t.atZone(ZoneOffset.UTC));
  }
}
