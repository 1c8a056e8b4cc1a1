package dev.respawn.api.v1alpha1;

/** Whether a restart resumes from the agent's last checkpoint. */
public enum ResumeMode {
  Off, Prefer, Require
}
