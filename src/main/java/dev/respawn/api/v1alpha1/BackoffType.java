package dev.respawn.api.v1alpha1;

/** How the delay before a restart grows with the attempt number. */
public enum BackoffType {
  None, Immediate, Linear, Exponential
}
