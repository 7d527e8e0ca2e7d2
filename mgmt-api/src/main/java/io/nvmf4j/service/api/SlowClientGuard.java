package io.nvmf4j.service.api;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Bounds how long a client may hold a connection of the API without sending (slowloris), one timer per connection:
 *
 * <ul>
 *   <li>from the connection's opening, its first request head must have arrived within {@code api.requestTimeoutSeconds}
 *       (a client that sends half a head is disconnected);</li>
 *   <li>from a request head, its body must have arrived within the same bound (otherwise 408, then the connection is
 *       closed); the time the service takes to carry the request out does not count;</li>
 *   <li>from a response's end, the next request head must have arrived within {@code api.idleTimeoutSeconds}.</li>
 * </ul>
 *
 * Vert.x's own idle timeout is not used: it also counts a request the service is still carrying out (an SPDK call,
 * an rbd image being created) as idle, and would cut it off.
 */
final class SlowClientGuard {
    private static final Logger LOG = LoggerFactory.getLogger(SlowClientGuard.class);

    private final Vertx vertx;
    private final long requestMs;
    private final long idleMs;
    /** The pending timer of each open connection. */
    private final Map<HttpConnection, Long> timers = new ConcurrentHashMap<>();

    SlowClientGuard(Vertx vertx, int requestTimeoutSeconds, int idleTimeoutSeconds) {
        this.vertx = vertx;
        this.requestMs = requestTimeoutSeconds * 1000L;
        this.idleMs = idleTimeoutSeconds * 1000L;
    }

    /** The server's connection handler: the first request head is due within the request bound. */
    void connected(HttpConnection c) {
        c.closeHandler(v -> cancel(c));
        arm(c, requestMs, "no whole request head within " + requestMs / 1000 + " s of connecting");
    }

    /**
     * Called with each request head before the router: its body is due within the request bound; once its response
     * has ended, the next head is due within the idle bound.
     */
    void request(HttpServerRequest req) {
        HttpConnection c = req.connection();
        cancel(c);
        timers.put(c, vertx.setTimer(requestMs, id -> bodyLate(c, id, req)));
        req.response().endHandler(v -> arm(c, idleMs, "no next request head within " + idleMs / 1000
            + " s of the last response"));
    }

    private void arm(HttpConnection c, long ms, String why) {
        cancel(c);
        timers.put(c, vertx.setTimer(ms, id -> {
            if (timers.remove(c, id)) {
                LOG.info("management API: closing the connection from {}: {}", c.remoteAddress(), why);
                c.close();
            }
        }));
    }

    private void bodyLate(HttpConnection c, long id, HttpServerRequest req) {
        if (!timers.remove(c, id) || req.isEnded()) {
            return; // the body arrived: the service is carrying the request out
        }
        String why = "request body not received within " + requestMs / 1000 + " s of its head";
        LOG.info("management API: {} {} from {}: {}; closing the connection", req.method(), req.path(),
            c.remoteAddress(), why);
        HttpServerResponse r = req.response();
        if (r.headWritten()) {
            c.close();
            return;
        }
        r.setStatusCode(408).putHeader("Content-Type", "application/json").putHeader("Connection", "close")
            .end(JsonNodeFactory.instance.objectNode().put("error", why).toString())
            .onComplete(ar -> c.close());
    }

    private void cancel(HttpConnection c) {
        Long id = timers.remove(c);
        if (id != null) {
            vertx.cancelTimer(id);
        }
    }
}
