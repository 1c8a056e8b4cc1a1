package dev.respawn.policy;

/** The type of a Kubernetes Event: Warning for what a user should look at, Normal otherwise. */
public enum EventType {
  Normal, Warning
}
