package io.nvmf4j.service.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmf4j.ControlException;
import io.nvmf4j.config.ApiConfig;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ControllerInfo;
import io.nvmf4j.engine.ErrorInjection;
import io.nvmf4j.service.metrics.Metrics;
import io.nvmf4j.service.state.ConfigService;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The router of docs/rest-api.md over a {@link ConfigService}, registered from the route table
 * {@link ApiContract#OPERATIONS}, and the plumbing its handlers answer through ({@link Call}): each handler
 * parses, hands the work to the service (changes) or a worker thread (reads) — never an engine call on the event
 * loop — and answers JSON serialised by the config file's mapper.
 */
public final class ApiRoutes {
    /** Largest request body (413 above). */
    public static final long BODY_LIMIT = 1 << 20;
    static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4";
    private static final String JSON = "application/json";
    private static final String V1 = "/api/v1";
    static final ApiContract.Query SUBSYSTEM_QUERY = ApiContract.Query.text("subsystem", "Only this subsystem's");
    static final ApiContract.Query HOST_QUERY = ApiContract.Query.text("host", "Only this host NQN's");
    static final ApiContract.Query LIMIT_QUERY = ApiContract.Query.integer("limit", "At most this many", 1, 64, 64);

    private final ObjectMapper mapper = ConfigStore.mapper();
    private final Vertx vertx;
    private final ConfigService service;
    private final ApiToken token;
    final Metrics metrics;
    private final BooleanSupplier ready;

    private ApiRoutes(Vertx vertx, ConfigService service, ApiToken token, Metrics metrics,
                      BooleanSupplier ready) {
        this.vertx = vertx;
        this.service = service;
        this.token = token;
        this.metrics = metrics;
        this.ready = ready;
    }

    /** The router with every route, the bearer-token check, the body limit and the error mapping. */
    public static Router router(Vertx vertx, ConfigService service, ApiToken token, Metrics metrics,
                                BooleanSupplier ready) {
        return new ApiRoutes(vertx, service, token, metrics, ready).build();
    }

    private Router build() {
        Router r = Router.router(vertx);
        r.route().handler(AuditLog::handle);
        ApiConfig api = service == null || service.snapshot().api == null ? new ApiConfig() : service.snapshot().api;
        r.route().handler(new RateLimiter(api.requestsPerSecondOrDefault(), api.requestBurstOrDefault(),
            System::nanoTime)::handle);
        ApiContract.OPERATIONS.stream().filter(op -> !op.authenticated).forEach(op -> register(r, op));
        r.route().handler(this::authenticate);
        r.route().handler(BodyHandler.create().setBodyLimit(BODY_LIMIT).setHandleFileUploads(false));
        ApiContract.OPERATIONS.stream().filter(op -> op.authenticated).forEach(op -> register(r, op));

        r.route().failureHandler(ApiErrors::handle);
        for (int status : new int[] {400, 401, 404, 413, 415, 500}) {
            r.errorHandler(status, ApiErrors::handle);
        }
        r.errorHandler(405, ctx -> {
            ctx.response().putHeader(HttpHeaders.ALLOW, String.join(", ", ApiContract.allowed(ctx.request().path())));
            ApiErrors.handle(ctx);
        });
        return r;
    }

    /** One operation of the table: a JSON body must say so (415 otherwise), then its handler serves it. */
    private <B> void register(Router r, ApiContract.Op<B> op) {
        Route route = r.route(HttpMethod.valueOf(op.method), op.path);
        if (op.request != null) {
            route.handler(this::requireJson);
        }
        route.handler(ctx -> {
            try {
                if (op.strictQuery) {
                    checkQuery(ctx, op);
                }
            } catch (ApiError e) {
                ctx.fail(e);
                return;
            }
            op.handler.handle(new Call<>(this, ctx, op));
        });
    }

    /**
     * One request to an operation of {@link ApiContract}: its handler reads the path and the body through it and
     * answers through it, once.
     *
     * @param <B> the type of the operation's JSON body
     */
    static final class Call<B> {
        final ApiRoutes api;
        final RoutingContext ctx;
        private final ApiContract.Op<B> op;

        private Call(ApiRoutes api, RoutingContext ctx, ApiContract.Op<B> op) {
            this.api = api;
            this.ctx = ctx;
            this.op = op;
        }

        ConfigService service() {
            return api.service;
        }

        /** The JSON body, parsed into the operation's request type (400 when it does not parse or is absent). */
        B body() {
            return api.body(ctx, op.requestType());
        }

        String param(String name) {
            return ctx.pathParam(name);
        }

        /** An integer path parameter (400 naming it otherwise). */
        int intParam(String name) {
            return ApiRoutes.intParam(ctx, name);
        }

        int nsid() {
            return intParam("nsid");
        }

        /** A string query parameter the operation takes, or null when absent. */
        String query(ApiContract.Query q) {
            return ctx.queryParams().get(q.name());
        }

        /** An integer query parameter the operation takes, or its default when absent (checked before the handler). */
        int intQuery(ApiContract.Query q) {
            String raw = query(q);
            return raw == null ? q.dflt() : Integer.parseInt(raw);
        }

        /** The listener named by the path's transport, address and port. */
        ListenerConfig listener() {
            return new ListenerConfig(param("transport"), param("address"), intParam("port"));
        }

        /** The subsystem the path names (404 when there is none). */
        SubsystemConfig subsystem() {
            String nqn = param("nqn");
            return service().snapshot().subsystems.stream().filter(s -> s.nqn.equals(nqn)).findFirst()
                .orElseThrow(() -> ControlException.notFound("no subsystem " + nqn));
        }

        /** The namespace the path names (404 when there is none). */
        NamespaceConfig namespace() {
            int nsid = nsid();
            SubsystemConfig s = subsystem();
            return s.namespaces.stream().filter(n -> n.nsid == nsid).findFirst()
                .orElseThrow(() -> ControlException.notFound("no namespace " + nsid + " in " + s.nqn));
        }

        /** Answers {@code body} with 200 at once. */
        void answer(Object body) {
            api.json(ctx, 200, body);
        }

        /** A read on a worker thread, answered 200. */
        void read(Callable<Object> what) {
            api.read(ctx, what);
        }

        /** A text made on a worker thread, answered 200 as {@code contentType}. */
        void text(String contentType, Callable<String> what) {
            api.vertx.executeBlocking(what, false).onComplete(ar -> {
                if (ar.failed()) {
                    ctx.fail(ar.cause());
                } else {
                    ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, contentType).end(ar.result());
                }
            });
        }

        /** A change through the config service, answered with the operation's success status and {@code view}. */
        <T> void change(Supplier<CompletionStage<T>> what, Function<T, Object> view) {
            api.change(ctx, op.okStatus(), what, view);
        }
    }

    // ------------------------------------------------------------------ the document, transports

    Views.Transports transports() {
        TargetConfig stored = service.snapshot();
        TargetConfig live = service.startedWith();
        List<String> fields = service.restartFields(stored);
        return new Views.Transports(stored.tcp, stored.rdma, new Views.LiveTransports(live.tcp, live.rdma),
            !fields.isEmpty(), fields);
    }

    /** A body with headers, made on a worker thread and written by {@link #json} on the event loop. */
    private record WithHeaders(Object body, Map<String, String> headers) {
    }

    /** The document, with its ETag and the start-up settings waiting for a restart as headers. */
    WithHeaders documentAnswer(TargetConfig c) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put(ApiContract.ETAG, ConfigService.etag(c));
        List<String> fields = service.restartFields(c);
        if (!fields.isEmpty()) {
            headers.put(ApiContract.RESTART_REQUIRED, String.join(", ", fields));
        }
        return new WithHeaders(ConfigService.redacted(c), headers);
    }

    /**
     * If-Match (RFC 9110 13.1.1) as a test of the document's current entity tag: absent accepts any; {@code *}
     * accepts any current document (there always is one); otherwise one of the listed tags must equal it by
     * strong comparison (a weak tag W/"..." never does).
     */
    static Predicate<String> ifMatch(RoutingContext ctx) {
        List<String> values = ctx.request().headers().getAll(ApiContract.IF_MATCH);
        if (values.isEmpty()) {
            return etag -> true;
        }
        Set<String> tags = new HashSet<>();
        for (String v : values) {
            for (String tag : v.split(",")) {
                tags.add(tag.trim());
            }
        }
        return etag -> tags.contains("*") || tags.contains(etag);
    }

    // ------------------------------------------------------------------ health and security

    void health(RoutingContext ctx) {
        boolean isReady = ready.getAsBoolean();
        json(ctx, isReady ? 200 : 503, new Views.Health(isReady ? "UP" : "DOWN", true, isReady));
    }

    void readiness(RoutingContext ctx) {
        boolean isReady = ready.getAsBoolean();
        json(ctx, isReady ? 200 : 503, new Views.Status(isReady ? "UP" : "DOWN"));
    }

    private void authenticate(RoutingContext ctx) {
        String header = ctx.request().getHeader(HttpHeaders.AUTHORIZATION);
        if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            ctx.fail(new ApiError(401, "missing bearer token", null));
        } else if (!token.matches(header.substring(7).trim())) {
            ctx.fail(new ApiError(401, "wrong bearer token", null));
        } else {
            ctx.next();
        }
    }

    private void requireJson(RoutingContext ctx) {
        String type = ctx.request().getHeader(HttpHeaders.CONTENT_TYPE);
        String bare = type == null ? "" : type.split(";", 2)[0].trim();
        if (!bare.equalsIgnoreCase(JSON)) {
            ctx.fail(new ApiError(415, "Content-Type must be application/json, got "
                + (type == null ? "none" : type), null));
        } else {
            ctx.next();
        }
    }

    // ------------------------------------------------------------------ plumbing

    /** A read on a worker thread (engine snapshots take the engine's lock), answered 200. */
    private void read(RoutingContext ctx, Callable<Object> what) {
        vertx.executeBlocking(what, false).onComplete(ar -> {
            if (ar.failed()) {
                ctx.fail(ar.cause());
            } else {
                json(ctx, 200, ar.result());
            }
        });
    }

    /** A change through the config service, answered with {@code status} and the view of its result. */
    private <T> void change(RoutingContext ctx, int status, Supplier<CompletionStage<T>> what,
                            Function<T, Object> view) {
        CompletionStage<T> stage;
        try {
            stage = what.get();
        } catch (RuntimeException e) {
            ctx.fail(e);
            return;
        }
        Future.fromCompletionStage(stage, vertx.getOrCreateContext()).onComplete(ar -> {
            if (ar.failed()) {
                ctx.fail(ar.cause());
            } else if (status == 204) {
                ctx.response().setStatusCode(204).end();
            } else {
                vertx.executeBlocking(() -> view.apply(ar.result()), false).onComplete(v -> {
                    if (v.failed()) {
                        ctx.fail(v.cause());
                    } else {
                        json(ctx, status, v.result());
                    }
                });
            }
        });
    }

    private void json(RoutingContext ctx, int status, Object answer) {
        Object body = answer;
        if (answer instanceof WithHeaders w) {
            w.headers().forEach(ctx.response()::putHeader);
            body = w.body();
        }
        String text;
        try {
            text = mapper.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            ctx.fail(e);
            return;
        }
        ctx.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, JSON).end(text);
    }

    private <T> T body(RoutingContext ctx, Class<T> type) {
        String text = ctx.body().asString();
        T value;
        try {
            value = text == null || text.isBlank() ? null : mapper.readValue(text, type);
        } catch (JsonProcessingException e) {
            throw new JsonBodyException(e);
        }
        if (value == null) {
            throw ApiError.badRequest("body", "a JSON object is required");
        }
        return value;
    }

    static ErrorInjection injection(Bodies.ErrorInjection b) {
        return new ErrorInjection(required(b.ioType, "ioType"), required(b.errorType, "errorType"),
            b.count == null ? 0 : b.count, b.timeoutMs == null ? 0 : b.timeoutMs);
    }

    /** POST /pools/{pool}/volumes: name and size are required. */
    static io.nvmf4j.engine.VolumeRequest volumeRequest(Bodies.Volume b) {
        return new io.nvmf4j.engine.VolumeRequest(required(b.name, "name"), required(b.size, "size"), b.blockSize,
            b.thick);
    }

    /**
     * POST /subsystems/{nqn}/hosts: a dhchapCtrlKey needs a dhchapKey (the controller only answers a host that
     * authenticated), a tlsKeyDerivation a tlsKey.
     */
    static CompletionStage<String> addHost(Call<Bodies.AllowedHost> c) {
        Bodies.AllowedHost b = c.body();
        String nqn = required(b, "nqn").nqn;
        required(nqn, "nqn");
        if (b.dhchapKey == null && b.dhchapCtrlKey != null) {
            throw ApiError.badRequest("dhchapCtrlKey", "needs dhchapKey too (bidirectional authentication is on top of"
                + " the host's)");
        }
        if (b.tlsKey == null && b.tlsKeyDerivation != null) {
            throw ApiError.badRequest("tlsKeyDerivation", "needs tlsKey too");
        }
        HostKeyConfig keys = null;
        if (b.dhchapKey != null || b.tlsKey != null) {
            keys = new HostKeyConfig(nqn, b.dhchapKey, b.dhchapCtrlKey);
            keys.tlsKey = b.tlsKey;
            keys.tlsKeyDerivation = b.tlsKeyDerivation;
        }
        return c.service().addHost(c.param("nqn"), nqn, keys);
    }

    /** POST /discovery/hosts: a host NQN and a tlsKey (the discovery subsystem takes TLS PSKs only). */
    static CompletionStage<HostKeyConfig> addDiscoveryHost(Call<Bodies.DiscoveryHost> c) {
        Bodies.DiscoveryHost b = c.body();
        HostKeyConfig keys = new HostKeyConfig(required(b.nqn, "nqn"), null, null);
        keys.tlsKey = required(b.tlsKey, "tlsKey");
        keys.tlsKeyDerivation = b.tlsKeyDerivation;
        return c.service().addDiscoveryHost(keys);
    }

    /** A QoS group body for path name {@code name}: its name absent (taken from the path) or the same. */
    static io.nvmf4j.config.QosGroupConfig qosGroup(io.nvmf4j.config.QosGroupConfig g, String name) {
        if (g.name == null) {
            g.name = name;
        } else if (!g.name.equals(name)) {
            throw ApiError.badRequest("name", "must be the group of the path (" + name + ") or absent, got " + g.name);
        }
        return g;
    }

    static <T> T required(T value, String field) {
        if (value == null) {
            throw ApiError.badRequest(field, "missing");
        }
        return value;
    }

    /** Carries a Jackson failure out of a Supplier; unwrapped before mapping. */
    static final class JsonBodyException extends RuntimeException {
        JsonBodyException(JsonProcessingException cause) {
            super(cause.getOriginalMessage(), cause, false, false);
        }
    }

    /**
     * The query of a request against the parameters its operation takes: an unknown or repeated parameter, an
     * integer that is not one or out of range, is 400 naming it.
     */
    private static void checkQuery(RoutingContext ctx, ApiContract.Op<?> op) {
        for (String name : ctx.queryParams().names()) {
            ApiContract.Query q = op.query.stream().filter(x -> x.name().equals(name)).findFirst().orElse(null);
            if (q == null) {
                throw ApiError.badRequest(name, "unknown query parameter" + (op.query.isEmpty() ? " (this operation takes"
                    + " none)" : "; this operation takes " + String.join(", ", op.query.stream().map(ApiContract.Query::name)
                    .toList())));
            }
            List<String> values = ctx.queryParams().getAll(name);
            if (values.size() > 1) {
                throw ApiError.badRequest(name, "given " + values.size() + " times");
            }
            if (q.integer()) {
                String raw = values.get(0);
                long v;
                try {
                    v = Long.parseLong(raw);
                } catch (NumberFormatException e) {
                    throw ApiError.badRequest(name, "must be an integer, got '" + raw + "'");
                }
                if (v < q.min() || v > q.max()) {
                    throw ApiError.badRequest(name, "must be " + q.min() + ".." + q.max() + ", got " + v);
                }
            }
        }
    }

    private static int intParam(RoutingContext ctx, String name) {
        String raw = ctx.pathParam(name);
        try {
            return Integer.parseInt(raw);
        } catch (NumberFormatException e) {
            throw ApiError.badRequest(name, "must be an integer, got '" + raw + "'");
        }
    }

    // ------------------------------------------------------------------ views

    List<SubsystemView> subsystemViews(List<SubsystemConfig> all) {
        var states = service.listenerStates();
        return all.stream().map(s -> SubsystemView.of(s, states)).toList();
    }

    /** The subsystem with each listener's state (listening and its bound port, or failed and why). */
    SubsystemView subsystemView(SubsystemConfig s) {
        return SubsystemView.of(s, service.listenerStates());
    }

    /** QoS group {@code name} (404 when there is none). */
    io.nvmf4j.config.QosGroupConfig qosGroup(String name) {
        io.nvmf4j.config.QosGroupConfig g = service.snapshot().qosGroup(name);
        if (g == null) {
            throw ControlException.notFound("no QoS group " + name);
        }
        return g;
    }

    /** The bdev {@code name} (404 when there is none). */
    BdevConfig bdev(String name) {
        BdevConfig b = service.snapshot().bdev(name);
        if (b == null) {
            throw ControlException.notFound("no bdev " + name);
        }
        return b;
    }

    /** Every bdev of {@code c} as {@link #bdevView(BdevConfig)} shows it (the namespaces walked once). */
    ArrayNode bdevViews(TargetConfig c) {
        Map<String, String> usedBy = new HashMap<>();
        for (SubsystemConfig s : c.subsystems) {
            for (NamespaceConfig n : s.namespaces) {
                usedBy.put(n.bdev, s.nqn + "/" + n.nsid);
            }
        }
        ArrayNode out = mapper.createArrayNode();
        c.bdevs.forEach(b -> out.add(mapper.<ObjectNode>valueToTree(b).put("usedBy", usedBy.get(b.name))));
        return out;
    }

    /**
     * The bdev as configured plus {@code usedBy}: "nqn/nsid" of the namespace it backs, or null, against the document
     * as it is now.
     */
    ObjectNode bdevView(BdevConfig b) {
        return mapper.<ObjectNode>valueToTree(b).put("usedBy", service.usedBy(b.name));
    }

    static List<Views.Controller> controllers(List<ControllerInfo> list) {
        List<Views.Controller> out = new ArrayList<>();
        for (ControllerInfo c : list) {
            List<Views.Queue> queues = new ArrayList<>();
            for (ControllerInfo.Queue q : c.queues()) {
                queues.add(new Views.Queue(q.qid(), q.address()));
            }
            out.add(new Views.Controller(c.cntlid(), c.hostnqn(), uuidOf(c.hostid()), c.address(), c.kato(), queues));
        }
        return out;
    }

    private static String uuidOf(byte[] b) {
        ByteBuffer bb = ByteBuffer.wrap(b);
        return new UUID(bb.getLong(), bb.getLong()).toString();
    }

    /** Every (method, path) served, for the OpenAPI check; paths in the router's {@code :param} form. */
    static List<String> describe(Router router) {
        return router.getRoutes().stream().filter(rt -> rt.getPath() != null && !rt.methods().isEmpty())
            .flatMap(rt -> rt.methods().stream().map(HttpMethod::name).map(m -> m + " " + rt.getPath()))
            .toList();
    }
}
