package dev.respawn.policy;

/** An operator's request from an annotation (api.md §6): its id, and a reason when one was given. */
public record Request(String id, String reason) {}
