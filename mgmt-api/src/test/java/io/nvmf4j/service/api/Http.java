package io.nvmf4j.service.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/** A small JSON client for the API tests (java.net.http, HTTP/1.1). */
public final class Http {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();

    private final String base;
    private final String token;
    private final Map<String, String> headers;

    public Http(int port, String token) {
        this(port, token, Map.of());
    }

    private Http(int port, String token, Map<String, String> headers) {
        this.base = "http://127.0.0.1:" + port;
        this.token = token;
        this.headers = headers;
    }

    /** An HTTPS client (HTTP/1.1) that trusts exactly the PEM certificate {@code cert}. */
    public static HttpClient trusting(java.nio.file.Path cert) throws Exception {
        java.security.KeyStore trust = java.security.KeyStore.getInstance(java.security.KeyStore.getDefaultType());
        trust.load(null, null);
        try (java.io.InputStream in = java.nio.file.Files.newInputStream(cert)) {
            trust.setCertificateEntry("api", java.security.cert.CertificateFactory.getInstance("X.509")
                .generateCertificate(in));
        }
        javax.net.ssl.TrustManagerFactory tmf =
            javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        javax.net.ssl.SSLContext ssl = javax.net.ssl.SSLContext.getInstance("TLS");
        ssl.init(null, tmf.getTrustManagers(), null);
        return HttpClient.newBuilder().sslContext(ssl).version(HttpClient.Version.HTTP_1_1).build();
    }

    private int port() {
        return Integer.parseInt(base.substring(base.lastIndexOf(':') + 1));
    }

    public Http withToken(String other) {
        return new Http(port(), other, headers);
    }

    /** A client that sends {@code If-Match: tags} with every request. */
    public Http withIfMatch(String tags) {
        Map<String, String> more = new java.util.HashMap<>(headers);
        more.put("If-Match", tags);
        return new Http(port(), token, Map.copyOf(more));
    }

    /** One answer: status, raw body, parsed JSON (or null) and headers. */
    public record Res(int status, String body, HttpResponse<String> raw) {
        public JsonNode json() {
            try {
                return body.isEmpty() ? null : MAPPER.readTree(body);
            } catch (IOException e) {
                throw new UncheckedIOException("not JSON (" + status + "): " + body, e);
            }
        }

        public String header(String name) {
            return raw.headers().firstValue(name).orElse(null);
        }

        public String error() {
            return json().get("error").asText();
        }

        /** The "field" of an error body (null when JSON null). */
        public String field() {
            JsonNode f = json().get("field");
            return f == null || f.isNull() ? null : f.asText();
        }

        @Override
        public String toString() {
            return status + " " + body;
        }
    }

    public static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    public Res get(String path) {
        return send("GET", path, null, null);
    }

    public Res post(String path, String json) {
        return send("POST", path, json, "application/json");
    }

    public Res put(String path, String json) {
        return send("PUT", path, json, "application/json");
    }

    public Res patch(String path, String json) {
        return send("PATCH", path, json, "application/json");
    }

    public Res delete(String path) {
        return send("DELETE", path, null, null);
    }

    public Res send(String method, String path, String body, String contentType) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(20))
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(body));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        headers.forEach(b::header);
        try {
            HttpResponse<String> r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return new Res(r.statusCode(), r.body(), r);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public static JsonNode parse(String json) {
        try {
            return MAPPER.readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
