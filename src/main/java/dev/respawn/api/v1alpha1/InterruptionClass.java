package dev.respawn.api.v1alpha1;

/** Interruption classes of api.md §4. */
public enum InterruptionClass {
  ToolFailure, Timeout, ContextReset, ProcessCrash, Unknown
}
