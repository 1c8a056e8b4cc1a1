package dev.respawn.api.v1alpha1;

/** What a matching failure rule does with a failure. */
public enum FailureAction {
  Retry, Fail, Ignore
}
