package dev.respawn.controller;

import com.fasterxml.jackson.databind.node.ArrayNode;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.function.Predicate;

/**
 * A status write that holds only for the object as it was read: a JSON Patch that puts the read
 * {@code resourceVersion} back and replaces the whole status. The API server takes it only when the object is
 * still that version; otherwise it answers 409 at once: the object was changed since (a spec edit, an operator
 * action's annotation), or deleted and made anew under the same name. A status decided on the old object then
 * never lands on the new one (attempts, history, a circuit of an instance that no longer exists).
 *
 * <p>Why not a diff of the status (JOSDK's patchStatus): it carries no version, so it would land on a newer or a
 * re-made object; and on fabric8's mock API server a diff's {@code replace} of a field the new object lacks throws
 * inside the server, which then never answers (the client waits out its timeout). Both operations here apply to
 * any object: only the version check can refuse it, on both servers. Why not a PUT: the mock takes a stale PUT of
 * {@code /status} without a conflict.
 */
public final class StatusPatch {
  private StatusPatch() {}

  /**
   * Replaces the status of {@code read} with {@code status} if the object is still as read; what the server holds
   * then. Throws the client's exception otherwise: 409 changed or re-made since, 404 deleted.
   */
  public static <P extends HasMetadata> P replaceIfUnchanged(KubernetesClient client, P read, Object status) {
    ArrayNode ops = Serialization.jsonMapper().createArrayNode();
    ops.addObject().put("op", "replace").put("path", "/metadata/resourceVersion")
        .put("value", read.getMetadata().getResourceVersion());
    ops.addObject().put("op", "add").put("path", "/status").set("value",
        Serialization.jsonMapper().valueToTree(status));
    return client.resource(read).subresource("status").patch(PatchContext.of(PatchType.JSON), ops.toString());
  }

  /**
   * The same for the reconciled object: true when the object shows the status now, false when it is gone (deleted,
   * or deleted and made anew under its name: nothing is to be recorded or told for it). What the server holds then
   * is cached at once, so that the next reconcile sees its own write and does not write it again.
   *
   * <p>A conflict whose object already {@code shows} the status is this write's own: it landed before, and its answer
   * was lost (the client retried it after a 5xx or a timeout, or an earlier reconcile wrote it). It counts as
   * written, so that the decision is told once. Any other conflict is thrown: the object changed since it was read,
   * and the reconcile is to decide again on what it is now.
   */
  static <P extends HasMetadata> boolean commit(Context<P> context, P read, Object status, Predicate<P> shows) {
    P held;
    try {
      held = replaceIfUnchanged(context.getClient(), read, status);
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return false;
      }
      if (e.getCode() != 409) {
        throw e;
      }
      held = context.getClient().resource(read).get();
      if (held == null || !read.getMetadata().getUid().equals(held.getMetadata().getUid())) {
        return false;
      }
      if (!shows.test(held)) {
        throw e;
      }
    }
    context.eventSourceRetriever().getControllerEventSource()
        .handleRecentResourceUpdate(ResourceID.fromResource(read), held, read);
    return true;
  }
}
