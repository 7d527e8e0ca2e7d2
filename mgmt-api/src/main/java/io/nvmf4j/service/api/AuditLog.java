package io.nvmf4j.service.api;

import io.nvmf4j.config.LogText;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.net.SocketAddress;
import io.vertx.ext.web.RoutingContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Set;

/**
 * One INFO line of logger {@code io.nvmf4j.service.api.AuditLog} per request that asks for a change (POST, PUT,
 * PATCH, DELETE), accepted or refused, whatever refused it (the token, the body, the validator, the engine): the
 * client's {@code ip:port}, the method and path, the status and, for a refusal, the reason the client was given.
 * Never the body or a header (they may carry the token). In JSON logs the same facts are {@code kvpList} fields
 * {@code client}, {@code method}, {@code path}, {@code status}, {@code result} and {@code reason}.
 *
 * <p>The path and the reason carry what the client sent (a route parameter, a field of the body), so both are
 * passed through {@link LogText}: a CR or LF in them cannot start a forged line, and the reason is quoted so it
 * cannot pose as the fields after it.
 */
final class AuditLog {
    private static final Logger LOG = LoggerFactory.getLogger(AuditLog.class);
    /** The routing-context key under which {@link ApiErrors} leaves the reason it answered. */
    static final String REASON = "nvmf4j.auditReason";
    private static final Set<HttpMethod> CHANGES = Set.of(HttpMethod.POST, HttpMethod.PUT, HttpMethod.PATCH,
        HttpMethod.DELETE);

    private AuditLog() {
    }

    /** The router's first handler: a change request gets its line when its answer has been sent. */
    static void handle(RoutingContext ctx) {
        if (CHANGES.contains(ctx.request().method())) {
            ctx.addEndHandler(v -> log(ctx));
        }
        ctx.next();
    }

    private static void log(RoutingContext ctx) {
        SocketAddress a = ctx.request().remoteAddress();
        String client = a == null ? "unknown" : a.hostAddress() + ":" + a.port();
        String method = ctx.request().method().name();
        String path = LogText.escape(ctx.request().path());
        int status = ctx.response().getStatusCode();
        String result = status < 400 ? "accepted" : "refused";
        String reason = LogText.quoted(ctx.get(REASON));
        LOG.atInfo().addKeyValue("client", client).addKeyValue("method", method).addKeyValue("path", path)
            .addKeyValue("status", status).addKeyValue("result", result).addKeyValue("reason", reason)
            .log("{} {} from {}: {} {}{}", method, path, client, status, result, reason == null ? "" : ": " + reason);
    }
}
