package dev.respawn.cli;

import dev.respawn.api.v1alpha1.AgentInstance;
import dev.respawn.api.v1alpha1.RestartRecord;
import dev.respawn.policy.GoDuration;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.KubernetesClientTimeoutException;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/** {@code --wait}: watches the instance until a request's new run started, was refused, or time ran out. */
final class RequestWaiter {
  private RequestWaiter() {}

  /** @param runBefore status.run when the request was made (see {@link RequestProgress#of}) */
  static RequestProgress await(Cluster cluster, String name, String id, boolean resume, int runBefore,
      Duration timeout) {
    AtomicReference<RequestProgress> last = new AtomicReference<>();
    try {
      try {
        cluster.instances().withName(name).waitUntilCondition(i -> {
          RequestProgress p = RequestProgress.of(i, id, resume, runBefore);
          last.set(p);
          return p.state().done();
        }, timeout.toMillis(), TimeUnit.MILLISECONDS);
      } catch (KubernetesClientTimeoutException e) {
        RequestProgress seen = last.get() != null ? last.get()
            : RequestProgress.of(cluster.instances().withName(name).get(), id, resume, runBefore);
        if (!seen.state().done()) {
          return new RequestProgress(RequestProgress.State.TIMED_OUT, "timed out after " + GoDuration.format(timeout)
              + ": " + seen.message(), seen.instance());
        }
        return seen;
      }
    } catch (KubernetesClientException e) {
      // the annotation is set: the request stands and the operator acts on it; only the wait could not go on
      return new RequestProgress(RequestProgress.State.WAIT_FAILED, "request " + id + " was made (annotation set), "
          + "but waiting for it failed: " + ApiErrors.describe(e, cluster.url()) + "; --wait watches the "
          + "AgentInstance (get, list and watch on agentinstances); see it with kubectl respawn status " + name,
          last.get() == null ? null : last.get().instance());
    }
    RequestProgress done = last.get();
    if (done.state() == RequestProgress.State.REFUSED) {
      Optional<String> note = warning(cluster, name, id);
      if (note.isPresent()) {
        return new RequestProgress(done.state(), note.get(), done.instance());
      }
    }
    return done;
  }

  /** The operator's Warning Event about the request, if it wrote one (it says why it refused). */
  static Optional<String> warning(Cluster cluster, String name, String id) {
    // each group on its own: no right to read one (or no such API) still lets the other tell; else status says enough
    try {
      for (Event e : cluster.client.events().v1().events().inNamespace(cluster.namespace).list().getItems()) {
        if ("Warning".equals(e.getType()) && e.getRegarding() != null && name.equals(e.getRegarding().getName())
            && e.getNote() != null && e.getNote().contains(id)) {
          return Optional.of(e.getNote());
        }
      }
    } catch (KubernetesClientException e) {
      // try the core group
    }
    try {
      for (io.fabric8.kubernetes.api.model.Event e : cluster.client.v1().events().inNamespace(cluster.namespace)
          .list().getItems()) {
        if ("Warning".equals(e.getType()) && e.getInvolvedObject() != null
            && name.equals(e.getInvolvedObject().getName()) && e.getMessage() != null && e.getMessage().contains(id)) {
          return Optional.of(e.getMessage());
        }
      }
    } catch (KubernetesClientException e) {
      // neither: the status says enough
    }
    return Optional.empty();
  }

  /** The document fields of a finished wait. */
  static void describe(Map<String, Object> d, RequestProgress p) {
    boolean started = p.state() == RequestProgress.State.STARTED;
    d.put("success", started);
    d.put("waited", true);
    d.put("restarted", started);
    if (started && p.followed() != null) {
      // the run started and has ended since: status's history has it, lastRestart is the next restart's
      d.put("pod", p.followed().pod);
      d.put("started_at", p.followed().startedAt);
    } else if (started && p.instance().getStatus().lastRestart != null
        && Objects.equals(d.get("request_id"), p.instance().getStatus().lastRestart.requestId)) {
      AgentInstance i = p.instance();
      RestartRecord last = i.getStatus().lastRestart;
      d.put("previous_pod", last.previousPod);
      d.put("pod", last.pod);
      d.put("started_at", last.startedAt);
      d.put("last_restart", last);
    } else if (!started) {
      d.put("error", p.state().name().toLowerCase(Locale.ROOT));
    }
  }
}
