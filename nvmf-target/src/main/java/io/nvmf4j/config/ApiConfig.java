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
}
