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
    @Range(min = 0, max = 65535, note = "0 disables the API")
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
    @Range(min = 1, max = MAX_REQUESTS_PER_SECOND)
    public Integer requestsPerSecond;
    /**
     * Requests a client address may send at once before {@link #requestsPerSecond} applies; 1..1000000; null:
     * {@link #DEFAULT_REQUEST_BURST}.
     */
    @Range(min = 1, max = MAX_REQUESTS_PER_SECOND)
    public Integer requestBurst;
    /**
     * Serve the API without TLS on an address other than loopback, where the token crosses the network in clear
     * text; without it (null, false) such a document is refused. Ignored with TLS or on a loopback address.
     */
    public Boolean allowPlaintext;
    /**
     * Seconds a client has to send a whole request head after opening a connection, and its body after the head;
     * a client that is slower is answered 408 (body) or disconnected (head). 1..{@link #MAX_TIMEOUT_SECONDS};
     * null: {@link #DEFAULT_REQUEST_TIMEOUT_SECONDS}. The time the service takes to carry a request out does not
     * count.
     */
    @Range(min = 1, max = MAX_TIMEOUT_SECONDS)
    public Integer requestTimeoutSeconds;
    /**
     * Seconds a connection may wait between a response and the whole head of its next request before it is closed.
     * 1..{@link #MAX_TIMEOUT_SECONDS}; null: {@link #DEFAULT_IDLE_TIMEOUT_SECONDS}.
     */
    @Range(min = 1, max = MAX_TIMEOUT_SECONDS)
    public Integer idleTimeoutSeconds;

    public int requestsPerSecondOrDefault() {
        return requestsPerSecond == null ? DEFAULT_REQUESTS_PER_SECOND : requestsPerSecond;
    }

    public int requestBurstOrDefault() {
        return requestBurst == null ? DEFAULT_REQUEST_BURST : requestBurst;
    }

    public int requestTimeoutSecondsOrDefault() {
        return requestTimeoutSeconds == null ? DEFAULT_REQUEST_TIMEOUT_SECONDS : requestTimeoutSeconds;
    }

    public int idleTimeoutSecondsOrDefault() {
        return idleTimeoutSeconds == null ? DEFAULT_IDLE_TIMEOUT_SECONDS : idleTimeoutSeconds;
    }

    public boolean allowPlaintextOrDefault() {
        return Boolean.TRUE.equals(allowPlaintext);
    }

    public static final int DEFAULT_REQUESTS_PER_SECOND = 200;
    public static final int DEFAULT_REQUEST_BURST = 1000;
    public static final int MAX_REQUESTS_PER_SECOND = 1_000_000;
    public static final int DEFAULT_REQUEST_TIMEOUT_SECONDS = 10;
    public static final int DEFAULT_IDLE_TIMEOUT_SECONDS = 60;
    public static final int MAX_TIMEOUT_SECONDS = 3600;
}
