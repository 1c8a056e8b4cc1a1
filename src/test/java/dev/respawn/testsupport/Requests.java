package dev.respawn.testsupport;

import dev.respawn.api.v1alpha1.OperatorRequest;
import dev.respawn.policy.Request;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;

/** The operator-action requests a sighting carries, from a restart and a resume request (either may be null). */
public final class Requests {
  private Requests() {}

  public static Map<OperatorRequest, Request> of(Request restart, Request resume) {
    Map<OperatorRequest, Request> requests = new EnumMap<>(OperatorRequest.class);
    Optional.ofNullable(restart).ifPresent(r -> requests.put(OperatorRequest.RESTART, r));
    Optional.ofNullable(resume).ifPresent(r -> requests.put(OperatorRequest.RESUME, r));
    return requests;
  }
}
