package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.time.Duration;

/**
 * The REST API of docs/rest-api.md over {@link HttpClient} (HTTP/1.1). Every call answers the parsed
 * JSON body (null for 204) or throws a {@link CliException} carrying the API's error message and field
 * (4xx → exit 1), or "cannot connect" / the 5xx reason (exit 3).
 */
final class ApiClient {
    static final String V1 = "/api/v1";
    /** The header of a {@code PUT /api/v1/config} answer naming the start-up settings that wait for a restart. */
    static final String RESTART_REQUIRED = "Nvmf4j-Restart-Required";
    /**
     * Connecting, TLS handshake included: a service on a loaded machine (or a first TLS handshake in a cold JVM)
     * can take several seconds; an address with nothing listening is refused at once whatever this bound.
     */
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(120);

    private final ObjectMapper mapper;
    private final String base;
    private final String token;
    private final String tokenHint;
    private final HttpClient client;

    /**
     * @param tokenHint where nvmfctl looked for a token, added to a 401 message; null when a token was given
     * @param tls       the TLS context for https (--insecure, --cacert), or null for the JDK's default trust
     */
    ApiClient(ObjectMapper mapper, String url, String token, String tokenHint, SSLContext tls) {
        this.mapper = mapper;
        this.base = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
        this.token = token;
        this.tokenHint = tokenHint;
        HttpClient.Builder b = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(CONNECT_TIMEOUT);
        if (tls != null) {
            b.sslContext(tls);
        }
        this.client = b.build();
    }

    /** A path segment (NQN, host NQN, address) URL-encoded for the API's paths. */
    static String seg(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    String url() {
        return base;
    }

    JsonNode get(String path) {
        return send("GET", path, null);
    }

    JsonNode post(String path, Object body) {
        return send("POST", path, body);
    }

    JsonNode put(String path, Object body) {
        return send("PUT", path, body);
    }

    JsonNode patch(String path, Object body) {
        return send("PATCH", path, body);
    }

    JsonNode delete(String path) {
        return send("DELETE", path, null);
    }

    /** A call whose answer is returned whatever its status (health answers 503 with a body). */
    Response exchange(String method, String path, Object body) {
        HttpRequest.Builder b;
        try {
            b = HttpRequest.newBuilder(URI.create(base + path)).timeout(REQUEST_TIMEOUT);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("bad --url " + base + ": " + e.getMessage());
        }
        if (body == null) {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            b.method(method, HttpRequest.BodyPublishers.ofString(json(body))).header("Content-Type", "application/json");
        }
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        try {
            HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return new Response(r.statusCode(), r.body(), r.headers().firstValue(RESTART_REQUIRED).orElse(""));
        } catch (HttpConnectTimeoutException e) {
            throw new CliException(CliException.UNAVAILABLE, "cannot connect to " + base + ": timed out"
                + " (is the service running? check --url)");
        } catch (ConnectException e) {
            throw new CliException(CliException.UNAVAILABLE, "cannot connect to " + base + ": "
                + (e.getMessage() == null ? "connection refused" : e.getMessage())
                + " (is the service running? check --url)");
        } catch (SSLException e) {
            String why = e.getMessage() != null && e.getMessage().contains("PKIX")
                ? "the certificate is not trusted" : "TLS failed" + reason(e);
            throw new CliException(CliException.UNAVAILABLE, "cannot connect to " + base + ": " + why
                + " (trust its certificate with --cacert FILE; --insecure skips the check, for tests only)");
        } catch (IOException e) {
            throw new CliException(CliException.UNAVAILABLE, "cannot connect to " + base + reason(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException(CliException.UNAVAILABLE, "interrupted while waiting for " + base);
        }
    }

    private JsonNode send(String method, String path, Object body) {
        Response r = exchange(method, path, body);
        if (r.status >= 200 && r.status < 300) {
            return r.json(mapper);
        }
        throw failure(r);
    }

    /** The API's error as a CliException: its message, its field when the message does not start with it. */
    CliException failure(Response r) {
        String error = null;
        String field = null;
        try {
            JsonNode j = r.json(mapper);
            if (j != null && j.hasNonNull("error")) {
                error = j.get("error").asText();
                field = j.hasNonNull("field") ? j.get("field").asText() : null;
            }
        } catch (CliException notJson) {
            // fall through to the status line
        }
        if (error == null) {
            error = "HTTP " + r.status + (r.body.isBlank() ? "" : ": " + firstLine(r.body));
        }
        if (field != null && !error.startsWith(field)) {
            error = error + " (field " + field + ")";
        }
        if (r.status == 401 && tokenHint != null) {
            error = error + "; " + tokenHint;
        }
        int code = r.status >= 500 ? CliException.UNAVAILABLE : CliException.API;
        return new CliException(code, error, r.status, field);
    }

    private String json(Object body) {
        try {
            return body instanceof String s ? s : mapper.writeValueAsString(body);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String reason(Exception e) {
        Throwable t = e;
        while (t.getCause() != null && t.getMessage() == null) {
            t = t.getCause();
        }
        return t.getMessage() == null ? ": " + t.getClass().getSimpleName() : ": " + t.getMessage();
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    /**
     * An answer: status, raw body, and the start-up settings that apply only at the next start
     * ({@value #RESTART_REQUIRED}: "cores, tcp.maxQueueDepth"; empty when none or not said).
     */
    record Response(int status, String body, String restartRequired) {
        JsonNode json(ObjectMapper mapper) {
            if (body == null || body.isEmpty()) {
                return null;
            }
            try {
                return mapper.readTree(body);
            } catch (IOException e) {
                throw new CliException(CliException.UNAVAILABLE, "the service answered " + status
                    + " with a body that is not JSON");
            }
        }
    }

    /** --cacert: trusts the PEM certificates of {@code file} (only those), host names still verified. */
    static SSLContext trusting(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int i = 0;
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                store.setCertificateEntry("cert-" + i++, c);
            }
            if (i == 0) {
                throw CliException.usage("--cacert " + file + ": no PEM certificate in it");
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return ctx;
        } catch (NoSuchFileException e) {
            throw CliException.usage("--cacert " + file + ": no such file");
        } catch (IOException | CertificateException e) {
            throw CliException.usage("--cacert " + file + ": cannot read a PEM certificate from it");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** --insecure: accepts any certificate and any host name (testing against a self-signed certificate). */
    static SSLContext trustAll() {
        // no host name check either; the JDK's HTTP client reads this once, when its first client is built,
        // which in nvmfctl is this one
        System.setProperty("jdk.internal.httpclient.disableHostnameVerification", "true");
        TrustManager[] all = {new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        }};
        try {
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, all, null);
            return ctx;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
