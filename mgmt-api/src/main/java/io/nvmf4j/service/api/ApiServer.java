package io.nvmf4j.service.api;

import io.nvmf4j.config.ApiConfig;
import io.nvmf4j.runtime.FatalErrors;
import io.nvmf4j.service.metrics.Metrics;
import io.nvmf4j.service.state.ConfigService;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.file.FileSystemOptions;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.ext.web.Router;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/** The management API's HTTP(S) server: its own Vert.x instance, one router, bound to {@code api}. */
public final class ApiServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ApiServer.class);
    private final Vertx vertx;
    private final HttpServer server;
    private final Router router;
    private final boolean tls;

    private ApiServer(Vertx vertx, HttpServer server, Router router, boolean tls) {
        this.vertx = vertx;
        this.server = server;
        this.router = router;
        this.tls = tls;
    }

    /**
     * Binds {@code api.address:api.port} (TLS when tlsCert and tlsKey are set); fails if it cannot. Slow clients are
     * bounded by {@link SlowClientGuard}.
     */
    public static ApiServer start(ApiConfig api, ApiToken token, ConfigService service, Metrics metrics,
                                  BooleanSupplier ready) throws IOException {
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2).setWorkerPoolSize(8)
            .setFileSystemOptions(new FileSystemOptions().setFileCachingEnabled(false)
                .setClassPathResolvingEnabled(false)));
        // what a route or task failed with and nothing handled: an Error stops the process (FatalErrors), the rest
        // is logged as Vert.x would
        vertx.exceptionHandler(e -> {
            if (!FatalErrors.raise(e)) {
                LOG.error("management API: unhandled failure", e);
            }
        });
        try {
            Router router = ApiRoutes.router(vertx, service, token, metrics, ready);
            boolean tls = api.tlsCert != null && api.tlsKey != null;
            HttpServerOptions options = new HttpServerOptions().setHost(api.address).setPort(api.port)
                .setDecompressionSupported(false)
                // HTTP/1.1 only: with cleartext HTTP/2 detection on, Vert.x makes the connection (and calls the
                // connection handler that starts SlowClientGuard's first bound) only once a whole request head arrived
                .setHttp2ClearTextEnabled(false);
            if (tls) {
                options.setSsl(true).setKeyCertOptions(new PemKeyCertOptions().setCertPath(api.tlsCert)
                    .setKeyPath(api.tlsKey));
            }
            SlowClientGuard guard = new SlowClientGuard(vertx, api.requestTimeoutSecondsOrDefault(),
                api.idleTimeoutSecondsOrDefault());
            HttpServer server = vertx.createHttpServer(options).connectionHandler(guard::connected)
                .requestHandler(req -> {
                    guard.request(req);
                    router.handle(req);
                }).listen().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            if (!tls && !InetAddress.getByName(api.address).isLoopbackAddress()) {
                LOG.warn("management API on {} without TLS (api.allowPlaintext): the bearer token crosses the network "
                    + "in clear text", api.address);
            }
            return new ApiServer(vertx, server, router, tls);
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            close(vertx);
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            throw new IOException("cannot start the management API on " + api.address + ":" + api.port + ": "
                + cause.getMessage(), cause);
        } catch (InterruptedException e) {
            close(vertx);
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while starting the management API", e);
        }
    }

    public int port() {
        return server.actualPort();
    }

    public boolean tls() {
        return tls;
    }

    Router router() {
        return router;
    }

    /** Stops accepting requests and closes Vert.x (requests in flight are cut off). */
    @Override
    public void close() {
        close(vertx);
    }

    private static void close(Vertx vertx) {
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            // nothing more to do while shutting down
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
