package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

/** The management API: where it listens and how it authenticates (used by the service, not the engine). */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class ApiConfig {
    /** Bind address; loopback by default. */
    public String address = "127.0.0.1";
    /** Port; 0 disables the API. */
    public int port = 8420;
    /** Bearer token; when absent the service creates {@code <state-dir>/api-token} (mode 0600) at first start. */
    public String token;
    /** PEM certificate chain and private key: both set turns on TLS. */
    public String tlsCert;
    public String tlsKey;
    /**
     * Requests per second each client address may send on average (a token bucket per address); one more is
     * answered 429 with Retry-After. 1..{@link #MAX_REQUESTS_PER_SECOND}; null: {@link #DEFAULT_REQUESTS_PER_SECOND}.
     */
    public Integer requestsPerSecond;
    /**
     * Requests a client address may send at once before {@link #requestsPerSecond} applies; 1..1000000; null:
     * {@link #DEFAULT_REQUEST_BURST}.
     */
    public Integer requestBurst;

    public int requestsPerSecondOrDefault() {
        return requestsPerSecond == null ? DEFAULT_REQUESTS_PER_SECOND : requestsPerSecond;
    }

    public int requestBurstOrDefault() {
        return requestBurst == null ? DEFAULT_REQUEST_BURST : requestBurst;
    }

    public static final int DEFAULT_REQUESTS_PER_SECOND = 200;
    public static final int DEFAULT_REQUEST_BURST = 1000;
    public static final int MAX_REQUESTS_PER_SECOND = 1_000_000;
}
