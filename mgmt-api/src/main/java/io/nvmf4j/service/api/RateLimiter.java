package io.nvmf4j.service.api;

import io.vertx.core.net.SocketAddress;
import io.vertx.ext.web.RoutingContext;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * A token bucket per client address ({@code api.requestsPerSecond}, {@code api.requestBurst}): a client may send
 * {@code burst} requests at once and {@code rate} per second after that; one request more is answered 429 with
 * {@code Retry-After} (whole seconds until a token is back) and a JSON message, before the token check, so a
 * flood of bad tokens costs the same. Every client address counts on its own (a port does not make a new client);
 * at most {@link #MAX_CLIENTS} buckets are kept, the least recently used dropped first (a dropped client starts
 * with a full bucket again, which only ever lets a request through).
 *
 * <p>Runs on the Vert.x event loops; one lock around the small map.
 */
final class RateLimiter {
    static final int MAX_CLIENTS = 4096;

    private final double rate;
    private final double burst;
    private final LongSupplier nanoTime;
    private final Map<String, double[]> buckets = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, double[]> eldest) {
            return size() > MAX_CLIENTS;
        }
    };

    RateLimiter(int requestsPerSecond, int burst, LongSupplier nanoTime) {
        this.rate = requestsPerSecond;
        this.burst = burst;
        this.nanoTime = nanoTime;
    }

    /** Seconds the client at {@code address} must wait, or 0 when its request may go on (a token is taken). */
    long take(String address) {
        long now = nanoTime.getAsLong();
        synchronized (buckets) {
            double[] b = buckets.computeIfAbsent(address, a -> new double[] {burst, now});
            double tokens = Math.min(burst, b[0] + (now - (long) b[1]) / 1e9 * rate);
            b[1] = now;
            if (tokens >= 1) {
                b[0] = tokens - 1;
                return 0;
            }
            b[0] = tokens;
            return Math.max(1, (long) Math.ceil((1 - tokens) / rate));
        }
    }

    /** The router's handler: lets the request on, or answers 429. */
    void handle(RoutingContext ctx) {
        SocketAddress a = ctx.request().remoteAddress();
        long wait = take(a == null ? "unknown" : a.hostAddress());
        if (wait == 0) {
            ctx.next();
            return;
        }
        ctx.response().putHeader("Retry-After", Long.toString(wait));
        ctx.fail(new ApiError(429, "too many requests from this client: api.requestsPerSecond is " + (long) rate
            + " (burst " + (long) burst + "); retry after " + wait + " s", null));
    }
}
