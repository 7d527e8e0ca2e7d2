package io.nvmf4j.service.api;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.QosConfig;
import io.nvmf4j.config.QosGroupConfig;
import io.nvmf4j.config.QosLimits;
import io.nvmf4j.config.RdmaTransportConfig;
import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.config.TcpTransportConfig;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

import static io.nvmf4j.service.api.ApiRoutes.required;

/**
 * The API's one route table: every operation with its method and path, its contract (summary, request body,
 * answers and their statuses) and its handler, written once here. {@link ApiRoutes} registers the routes from it;
 * the build turns it into the OpenAPI 3.1 document ({@link OpenApiGenerator}, schemas generated from the Java types
 * named here), which the service serves. A route's answer names its Java type ({@link Op#ok}), so a new view
 * class plugs in by naming it.
 */
final class ApiContract {
    static final String JSON = "application/json";
    static final String ETAG = "ETag";
    static final String IF_MATCH = "If-Match";
    /** Header of PUT/GET /config: the start-up settings whose stored value waits for the next start. */
    static final String RESTART_REQUIRED = "Nvmf4j-Restart-Required";
    /** Marks a body whose schema is the bdev view (BdevConfig plus usedBy). */
    static final String BDEV_VIEW = "BdevView";

    /** A body that is a JSON array of {@code item}. */
    record Many(Object item) {
    }

    /** A body that is not JSON. */
    record Text(String contentType) {
    }

    /** One answer: status, description, body (a Java type, {@link Many}, {@link Text}, a name, or null). */
    record Answer(int status, String description, Object body, List<String> headers) {
    }

    /**
     * A query parameter of an operation: integers are bounded ({@code min}..{@code max}, {@code dflt} when absent);
     * strings have {@code min = max = dflt = 0}.
     */
    record Query(String name, String description, boolean integer, int min, int max, int dflt) {
        static Query text(String name, String description) {
            return new Query(name, description, false, 0, 0, 0);
        }

        static Query integer(String name, String description, int min, int max, int dflt) {
            return new Query(name, description, true, min, max, dflt);
        }
    }

    /** What serves one operation: it reads the request through {@code c} and answers through it once. */
    @FunctionalInterface
    interface Handler<B> {
        void handle(ApiRoutes.Call<B> c);
    }

    /**
     * One operation: method and path (in the router's {@code :param} form), its contract (summary, request body,
     * answers) and its handler. The router registers it ({@link ApiRoutes}), the build documents it
     * ({@link OpenApiGenerator}).
     *
     * @param <B> the type of its JSON request body ({@code Void}: none)
     */
    static final class Op<B> {
        final String method;
        final String path;
        final String id;
        final String summary;
        String description;
        Class<?> request;
        boolean authenticated = true;
        boolean ifMatch;
        final List<Query> query = new ArrayList<>();
        /** Refuse a query parameter it does not take ({@link #query}, {@link #noQuery}); older routes ignore them. */
        boolean strictQuery;
        final List<Answer> answers = new ArrayList<>();
        Handler<B> handler;

        Op(String method, String path, String id, String summary) {
            this.method = method;
            this.path = path;
            this.id = id;
            this.summary = summary;
        }

        Op<B> describe(String text) {
            description = text;
            return this;
        }

        /** A JSON request body of this type (adds 400, 413 and 415; the router requires application/json). */
        @SuppressWarnings("unchecked")
        <T> Op<T> body(Class<T> type) {
            request = type;
            return (Op<T>) this;
        }

        Op<B> ok(int status, Object body, String... headers) {
            answers.add(new Answer(status, status == 204 ? "Done; no body" : "Done", body, List.of(headers)));
            return this;
        }

        Op<B> fails(int status, String why) {
            return answer(status, why, Views.Error.class);
        }

        Op<B> answer(int status, String why, Object body) {
            answers.add(new Answer(status, why, body, List.of()));
            return this;
        }

        Op<B> open() {
            authenticated = false;
            return this;
        }

        /** Takes this query parameter (any other is refused, 400 naming it). */
        Op<B> query(Query q) {
            query.add(q);
            strictQuery = true;
            return this;
        }

        /** Takes no query parameter (any is refused, 400 naming it). */
        Op<B> noQuery() {
            strictQuery = true;
            return this;
        }

        Op<B> ifMatch() {
            ifMatch = true;
            return this;
        }

        Op<B> handle(Handler<B> h) {
            handler = h;
            return this;
        }

        /** The status of its first success answer: what a change answers when it is done. */
        int okStatus() {
            return answers.stream().mapToInt(Answer::status).filter(s -> s < 300).findFirst()
                .orElseThrow(() -> new IllegalStateException(id + " names no success answer"));
        }

        @SuppressWarnings("unchecked")
        Class<B> requestType() {
            return (Class<B>) request;
        }

        List<String> params() {
            List<String> out = new ArrayList<>();
            for (String seg : path.split("/")) {
                if (seg.startsWith(":")) {
                    out.add(seg.substring(1));
                }
            }
            return out;
        }

        /** The path in OpenAPI's {@code {param}} form. */
        String template() {
            return path.replaceAll(":([A-Za-z]+)", "{$1}");
        }

        /** Every answer: the ones named, then the errors every operation of its kind has. */
        List<Answer> allAnswers() {
            Map<Integer, Answer> all = new TreeMap<>();
            for (Answer a : answers) {
                all.put(a.status(), a);
            }
            List<String> params = params();
            if (params.contains("nsid") || params.contains("port")) {
                all.putIfAbsent(400, error(400, "A path parameter is not an integer"));
            }
            if (strictQuery) {
                all.putIfAbsent(400, error(400, "A query parameter that is unknown, repeated, not an integer or out "
                    + "of range (the error names it)"));
            }
            if (request != null) {
                all.putIfAbsent(400, error(400, "Malformed JSON, an unknown field, a wrong type or an invalid value"));
                all.putIfAbsent(413, error(413, "Body larger than " + ApiRoutes.BODY_LIMIT + " bytes"));
                all.putIfAbsent(415, error(415, "Content-Type is not application/json"));
            }
            if (!params.isEmpty()) {
                all.putIfAbsent(404, error(404, "No such " + String.join(" or ", params)));
            }
            if (authenticated) {
                all.putIfAbsent(401, new Answer(401, "Missing or wrong bearer token", Views.Error.class,
                    List.of("WWW-Authenticate")));
            }
            return new ArrayList<>(all.values());
        }

        private static Answer error(int status, String why) {
            return new Answer(status, why, Views.Error.class, List.of());
        }
    }

    private static Op<Void> op(String method, String path, String id, String summary) {
        return new Op<>(method, path, id, summary);
    }

    private static final String V1 = "/api/v1";
    private static final String NS = V1 + "/subsystems/:nqn/namespaces";
    private static final String HOSTS = V1 + "/subsystems/:nqn/hosts";
    private static final String LISTENERS = V1 + "/subsystems/:nqn/listeners";
    private static final String REFERRALS = V1 + "/discovery/referrals";
    private static final String DISCOVERY_HOSTS = V1 + "/discovery/hosts";
    private static final String POOLS = V1 + "/pools";
    private static final String VOLUMES = POOLS + "/:pool/volumes";
    private static final String SNAPSHOTS = VOLUMES + "/:volume/snapshots";
    private static final String IO = V1 + "/io";
    private static final String JAVA_ONLY = " java engine only: the spdk engine answers 400 with the reason (SPDK "
        + "counts I/O per bdev, not per host or controller, and reports no single I/O).";
    private static final String QOS_GROUPS = V1 + "/qos-groups";
    private static final String QOS_NOTE = "Limits iops, readMBps, writeMBps, rwMBps (MB = 2^20 bytes); absent or 0: "
        + "unlimited. I/O over a limit waits (it is not failed). May change any number of times while I/O runs. 400 "
        + "naming the field for a negative value, one beyond its range, or (spdk engine) IOPS not a multiple of 1000.";
    private static final String QOS_GROUP_NOTE = "A namespace is in one group at most; 400 naming namespaces[i] for "
        + "an unknown one, one named twice or in another group. java engine only (spdk: 400).";
    private static final String RESTART_NOTE = "Stored at once and applied at the next start; restartRequired and "
        + "restartFields say which stored settings differ from the ones in effect (GET /transports shows both).";

    /** Every operation the router serves, in the order of docs/rest-api.md: the one list of the API. */
    static final List<Op<?>> OPERATIONS = List.of(
        op("GET", V1 + "/health", "health", "Liveness and readiness").open()
            .ok(200, Views.Health.class).answer(503, "Not ready (starting or stopping)", Views.Health.class)
            .handle(c -> c.api.health(c.ctx)),
        op("GET", V1 + "/health/live", "liveness", "Liveness").open().ok(200, Views.Status.class)
            .handle(c -> c.answer(new Views.Status("UP"))),
        op("GET", V1 + "/health/ready", "readiness", "Readiness").open().ok(200, Views.Status.class)
            .answer(503, "Not ready (starting or stopping)", Views.Status.class)
            .handle(c -> c.api.readiness(c.ctx)),
        op("GET", V1 + "/openapi.json", "openApi", "This document").ok(200, ObjectNode.class)
            .handle(c -> c.text(JSON, ApiContract::document)),
        op("GET", "/metrics", "metrics", "Prometheus metrics")
            .describe("Prometheus text exposition format: Content-Type " + ApiRoutes.PROMETHEUS_TEXT + ".")
            .ok(200, new Text("text/plain"))
            .handle(c -> c.text(ApiRoutes.PROMETHEUS_TEXT, c.api.metrics::scrape)),

        op("GET", V1 + "/bdevs", "listBdevs", "List block devices").ok(200, new Many(BDEV_VIEW))
            .handle(c -> c.read(() -> c.api.bdevViews(c.service().snapshot()))),
        op("POST", V1 + "/bdevs", "addBdev", "Create a block device").body(BdevConfig.class)
            .ok(201, BDEV_VIEW).fails(409, "A bdev of that name exists")
            .handle(c -> c.change(() -> c.service().addBdev(c.body()), c.api::bdevView)),
        op("GET", V1 + "/bdevs/:name", "getBdev", "One block device").ok(200, BDEV_VIEW)
            .handle(c -> c.read(() -> c.api.bdevView(c.api.bdev(c.param("name"))))),
        op("PATCH", V1 + "/bdevs/:name", "growBdev", "Grow a block device (never shrinks)")
            .body(Bodies.Grow.class).ok(200, BDEV_VIEW)
            .handle(c -> c.change(() -> c.service().growBdev(c.param("name"),
                required(c.body().numBlocks, "numBlocks")), c.api::bdevView)),
        op("DELETE", V1 + "/bdevs/:name", "removeBdev", "Delete a block device").ok(204, null)
            .fails(409, "The bdev backs a namespace")
            .handle(c -> c.change(() -> c.service().removeBdev(c.param("name")), x -> null)),
        op("GET", V1 + "/bdevs/:name/errors", "listErrorInjections", "Active fault injections of an error bdev")
            .ok(200, new Many(Bodies.ErrorInjection.class))
            .handle(c -> c.read(() -> c.service().errorInjections(c.param("name")))),
        op("POST", V1 + "/bdevs/:name/errors", "injectError", "Fail chosen commands of an error bdev")
            .describe("Runtime only (not saved): a restart starts clean. A new injection for an I/O type replaces "
                + "the one before.")
            .body(Bodies.ErrorInjection.class).ok(201, new Many(Bodies.ErrorInjection.class))
            .handle(c -> c.change(() -> c.service().injectError(c.param("name"), ApiRoutes.injection(c.body())),
                x -> x)),
        op("DELETE", V1 + "/bdevs/:name/errors", "clearErrors", "Stop every injection of an error bdev")
            .ok(204, null)
            .handle(c -> c.change(() -> c.service().clearErrors(c.param("name")), x -> null)),

        op("GET", POOLS, "listPools", "List pools with their capacity").ok(200, new Many(Views.Pool.class))
            .handle(c -> c.read(() -> c.service().pools().stream().map(Views.Pool::of).toList())),
        op("POST", POOLS, "addPool", "Add an empty pool")
            .describe("reflink-dir (java engine): an existing directory under storage.fileDirectories on a file "
                + "system that reflinks (XFS with reflink=1, btrfs); refused (400 naming path) otherwise. rbd (java "
                + "engine): a RADOS pool without images (pool, cephConf, clientName, keyring as an rbd bdev's); "
                + "refused (400 naming pool) when Ceph cannot open it or it holds images. lvol (spdk engine): an "
                + "SPDK lvol store on baseBdev.")
            .body(PoolConfig.class).ok(201, Views.Pool.class).fails(409, "A pool of that name exists")
            .handle(c -> c.change(() -> c.service().addPool(c.body()), Views.Pool::of)),
        op("GET", POOLS + "/:pool", "getPool", "One pool with its capacity").ok(200, Views.Pool.class)
            .handle(c -> c.read(() -> Views.Pool.of(c.service().pool(c.param("pool"))))),
        op("DELETE", POOLS + "/:pool", "removePool", "Remove an empty pool (its directory stays)").ok(204, null)
            .fails(409, "The pool still has volumes")
            .handle(c -> c.change(() -> c.service().removePool(c.param("pool")), x -> null)),
        op("GET", VOLUMES, "listVolumes", "The volumes of a pool, provisioned and allocated bytes")
            .ok(200, new Many(Views.Volume.class))
            .handle(c -> c.read(() -> c.service().volumes(c.param("pool")).stream().map(Views.Volume::of).toList())),
        op("POST", VOLUMES, "createVolume", "Create a volume (thin unless thick)")
            .describe("A namespace uses it as bdev <pool>/<volume>.")
            .body(Bodies.Volume.class).ok(201, Views.Volume.class).fails(409, "A volume of that name exists")
            .handle(c -> c.change(() -> c.service().createVolume(c.param("pool"), ApiRoutes.volumeRequest(c.body())),
                Views.Volume::of)),
        op("GET", VOLUMES + "/:volume", "getVolume", "One volume").ok(200, Views.Volume.class)
            .handle(c -> c.read(() -> Views.Volume.of(c.service().volume(c.param("pool"), c.param("volume"))))),
        op("PATCH", VOLUMES + "/:volume", "resizeVolume", "Resize a volume")
            .describe("A grow is live: hosts get the namespace-attribute event and see the new size. A shrink is "
                + "refused (409) while a namespace uses the volume.")
            .body(Bodies.Resize.class).ok(200, Views.Volume.class).fails(409, "A shrink of a volume a namespace uses")
            .handle(c -> c.change(() -> c.service().resizeVolume(c.param("pool"), c.param("volume"),
                required(c.body().size, "size")), Views.Volume::of)),
        op("DELETE", VOLUMES + "/:volume", "deleteVolume", "Delete a volume").ok(204, null)
            .fails(409, "A namespace uses the volume or it has snapshots")
            .handle(c -> c.change(() -> c.service().deleteVolume(c.param("pool"), c.param("volume")), x -> null)),
        op("GET", SNAPSHOTS, "listSnapshots", "The snapshots of a volume, oldest first")
            .ok(200, new Many(Views.Snapshot.class))
            .handle(c -> c.read(() -> c.service().snapshots(c.param("pool"), c.param("volume")).stream()
                .map(Views.Snapshot::of).toList())),
        op("POST", SNAPSHOTS, "createSnapshot", "Take a crash-consistent snapshot of a volume")
            .describe("Writes to the volume's namespace are held while the copy is made; pauseNanos says how long.")
            .body(Bodies.Named.class).ok(201, Views.SnapshotsTaken.class)
            .fails(409, "The volume has a snapshot of that name")
            .handle(c -> c.change(() -> c.service().createSnapshot(c.param("pool"), c.param("volume"),
                required(c.body().name, "name")), Views.SnapshotsTaken::of)),
        op("DELETE", SNAPSHOTS + "/:snapshot", "deleteSnapshot", "Delete a snapshot").ok(204, null)
            .fails(409, "A volume was cloned from the snapshot")
            .handle(c -> c.change(() -> c.service().deleteSnapshot(c.param("pool"), c.param("volume"),
                c.param("snapshot")), x -> null)),
        op("POST", SNAPSHOTS + "/:snapshot/clone", "cloneSnapshot", "Make a writable thin volume from a snapshot")
            .describe("The body names the new volume; it is exportable at once.")
            .body(Bodies.Named.class).ok(201, Views.Volume.class).fails(409, "A volume of that name exists")
            .handle(c -> c.change(() -> c.service().cloneSnapshot(c.param("pool"), c.param("volume"),
                c.param("snapshot"), required(c.body().name, "name")), Views.Volume::of)),
        op("POST", POOLS + "/:pool/group-snapshots", "createGroupSnapshot",
            "Snapshot several volumes of a pool at one instant")
            .describe("Each volume gets a snapshot of that name, its group; a write order across the volumes is kept.")
            .body(Bodies.GroupSnapshot.class).ok(201, Views.SnapshotsTaken.class)
            .fails(409, "A volume has a snapshot of that name; in an rbd pool, another client owns a volume's exclusive"
                + " lock, or took it while the snapshots were taken (none kept)")
            .handle(c -> c.change(() -> c.service().createGroupSnapshot(c.param("pool"),
                required(c.body().volumes, "volumes"), required(c.body().name, "name")), Views.SnapshotsTaken::of)),

        op("GET", V1 + "/subsystems", "listSubsystems", "List subsystems").ok(200, new Many(SubsystemView.class))
            .handle(c -> c.read(() -> c.api.subsystemViews(c.service().snapshot().subsystems))),
        op("POST", V1 + "/subsystems", "addSubsystem", "Create a subsystem").body(SubsystemConfig.class)
            .ok(201, SubsystemView.class).fails(409, "A subsystem of that NQN exists, or a listener cannot bind")
            .handle(c -> c.change(() -> c.service().addSubsystem(c.body()), c.api::subsystemView)),
        op("GET", V1 + "/subsystems/:nqn", "getSubsystem", "One subsystem").ok(200, SubsystemView.class)
            .handle(c -> c.read(() -> c.api.subsystemView(c.subsystem()))),
        op("PATCH", V1 + "/subsystems/:nqn", "patchSubsystem", "Allow any host or not")
            .body(Bodies.SubsystemPatch.class).ok(200, SubsystemView.class)
            .handle(c -> c.change(() -> c.service().setAllowAnyHost(c.param("nqn"),
                required(c.body().allowAnyHost, "allowAnyHost")), c.api::subsystemView)),
        op("DELETE", V1 + "/subsystems/:nqn", "removeSubsystem",
            "Delete a subsystem (connected hosts are disconnected)").ok(204, null)
            .handle(c -> c.change(() -> c.service().removeSubsystem(c.param("nqn")), x -> null)),

        op("GET", NS, "listNamespaces", "List namespaces").ok(200, new Many(NamespaceConfig.class))
            .handle(c -> c.read(() -> c.subsystem().namespaces)),
        op("POST", NS, "addNamespace", "Add a namespace")
            .describe("nsid 0 or absent: the lowest free one; nguid/uuid absent: generated once and kept.")
            .body(NamespaceConfig.class).ok(201, NamespaceConfig.class)
            .fails(409, "The nsid is taken or the bdev backs another namespace")
            .handle(c -> c.change(() -> c.service().addNamespace(c.param("nqn"), c.body()), n -> n)),
        op("GET", NS + "/:nsid", "getNamespace", "One namespace").ok(200, NamespaceConfig.class)
            .handle(c -> c.read(c::namespace)),
        op("PATCH", NS + "/:nsid", "patchNamespace", "Move a namespace to another ANA group while it serves")
            .describe("Kept as its anaGroup. Hosts connected through any listener get the ANA change event and read "
                + "the ANA log page (0Ch) with the namespace in its new group; its I/O takes that group's state "
                + "through each listener. 400 naming anaGroup for a group out of range "
                + "(spdk engine: above the subsystem's maxNamespaces).")
            .body(Bodies.NamespacePatch.class).ok(200, NamespaceConfig.class)
            .handle(c -> c.change(() -> c.service().setNamespaceAnaGroup(c.param("nqn"), c.nsid(),
                required(c.body().anaGroup, "anaGroup")), n -> n)),
        op("GET", NS + "/:nsid/reservation", "getReservation", "A namespace's persistent reservation (read-only)")
            .describe("Registered hosts (host identifier, key), holder and type, generation and PTPL, as hosts "
                + "change them with Reservation Register/Acquire/Release. java engine only (spdk: 400).")
            .ok(200, Views.Reservation.class)
            .handle(c -> c.read(() -> Views.Reservation.of(c.service().reservation(c.param("nqn"), c.nsid())))),
        op("DELETE", NS + "/:nsid", "removeNamespace", "Remove a namespace").ok(204, null)
            .handle(c -> c.change(() -> c.service().removeNamespace(c.param("nqn"), c.nsid()), x -> null)),

        op("GET", NS + "/:nsid/hosts", "listNamespaceHosts", "The hosts that see a masked namespace")
            .describe("null: the namespace is visible to every host the subsystem admits.")
            .ok(200, new Many(String.class))
            .handle(c -> c.read(() -> c.namespace().hosts)),
        op("POST", NS + "/:nsid/hosts", "addNamespaceHost", "Show a masked namespace to one more host")
            .describe("Only on a namespace added with a hosts list (400 otherwise). The host's controllers get the "
                + "changed-namespace event (AEN and log page 04h).")
            .body(Bodies.Host.class).ok(201, Views.AllowedHost.class).fails(409, "The host sees it already")
            .handle(c -> c.change(() -> c.service().addNamespaceHost(c.param("nqn"), c.nsid(),
                required(c.body().nqn, "nqn")), Views.AllowedHost::new)),
        op("DELETE", NS + "/:nsid/hosts/:hostnqn", "removeNamespaceHost",
            "Mask a namespace from a host (inactive for it; its controllers get the changed-namespace event)")
            .ok(204, null)
            .handle(c -> c.change(() -> c.service().removeNamespaceHost(c.param("nqn"), c.nsid(),
                c.param("hostnqn")), x -> null)),

        op("GET", NS + "/:nsid/qos", "getNamespaceQos", "A namespace's QoS: its limits and its hosts' limits")
            .describe("Absent limits (or 0) are unlimited; an empty object: no QoS.")
            .ok(200, QosConfig.class)
            .handle(c -> c.read(() -> c.namespace().qos == null ? new QosConfig() : c.namespace().qos)),
        op("PUT", NS + "/:nsid/qos", "setNamespaceQos", "Set or replace a namespace's QoS limits, live")
            .describe(QOS_NOTE + " Its per-host limits stay.")
            .body(QosLimits.class).ok(200, QosConfig.class)
            .handle(c -> c.change(() -> c.service().setNamespaceQos(c.param("nqn"), c.nsid(), c.body()), q -> q)),
        op("DELETE", NS + "/:nsid/qos", "removeNamespaceQos", "Remove a namespace's QoS limits (its hosts' stay)")
            .ok(204, null)
            .handle(c -> c.change(() -> c.service().removeNamespaceQos(c.param("nqn"), c.nsid()), x -> null)),
        op("PUT", NS + "/:nsid/qos/hosts/:hostnqn", "setNamespaceHostQos",
            "Set or replace the QoS limits of one host's I/O to a namespace, live")
            .describe(QOS_NOTE + " java engine only (spdk: 400).")
            .body(QosLimits.class).ok(200, QosLimits.class)
            .handle(c -> c.change(() -> c.service().setNamespaceHostQos(c.param("nqn"), c.nsid(), c.param("hostnqn"),
                c.body()), q -> q)),
        op("DELETE", NS + "/:nsid/qos/hosts/:hostnqn", "removeNamespaceHostQos",
            "Remove the QoS limits of one host on a namespace").ok(204, null)
            .handle(c -> c.change(() -> c.service().removeNamespaceHostQos(c.param("nqn"), c.nsid(),
                c.param("hostnqn")), x -> null)),
        op("GET", V1 + "/subsystems/:nqn/qos", "getSubsystemQos", "A subsystem's QoS: per-host limits")
            .ok(200, QosConfig.class)
            .handle(c -> c.read(() -> c.subsystem().qos == null ? new QosConfig() : c.subsystem().qos)),
        op("PUT", V1 + "/subsystems/:nqn/qos/hosts/:hostnqn", "setSubsystemHostQos",
            "Set or replace the QoS limits of one host's I/O to all namespaces of a subsystem, live")
            .describe(QOS_NOTE + " The host's I/O to every namespace of the subsystem shares one budget. java engine "
                + "only (spdk: 400).")
            .body(QosLimits.class).ok(200, QosLimits.class)
            .handle(c -> c.change(() -> c.service().setSubsystemHostQos(c.param("nqn"), c.param("hostnqn"),
                c.body()), q -> q)),
        op("DELETE", V1 + "/subsystems/:nqn/qos/hosts/:hostnqn", "removeSubsystemHostQos",
            "Remove the QoS limits of one host on a subsystem").ok(204, null)
            .handle(c -> c.change(() -> c.service().removeSubsystemHostQos(c.param("nqn"), c.param("hostnqn")),
                x -> null)),

        op("GET", HOSTS, "listHosts", "Allowed host NQNs").ok(200, new Many(String.class))
            .handle(c -> c.read(() -> c.subsystem().hosts)),
        op("POST", HOSTS, "addHost", "Allow a host (with dhchapKey: it must authenticate with DH-HMAC-CHAP)")
            .body(Bodies.AllowedHost.class).ok(201, Views.AllowedHost.class)
            .fails(409, "The host is allowed already")
            .handle(c -> c.change(() -> ApiRoutes.addHost(c), Views.AllowedHost::new)),
        op("DELETE", HOSTS + "/:hostnqn", "removeHost", "Disallow a host (its controllers are disconnected)")
            .ok(204, null)
            .handle(c -> c.change(() -> c.service().removeHost(c.param("nqn"), c.param("hostnqn")), x -> null)),

        op("GET", LISTENERS, "listListeners", "Listeners").ok(200, new Many(ListenerView.class))
            .handle(c -> c.read(() -> SubsystemView.listeners(c.subsystem().listeners,
                c.service().listenerStates()))),
        op("POST", LISTENERS, "addListener", "Add a listener").body(ListenerConfig.class)
            .ok(201, ListenerView.class).fails(409, "The listener exists or its address cannot be bound")
            .handle(c -> c.change(() -> c.service().addListener(c.param("nqn"), c.body()),
                l -> ListenerView.of(l, c.service().listenerStates().get(l)))),
        op("DELETE", LISTENERS + "/:transport/:address/:port", "removeListener", "Remove a listener")
            .ok(204, null)
            .handle(c -> c.change(() -> c.service().removeListener(c.param("nqn"), c.listener()), x -> null)),
        op("GET", LISTENERS + "/:transport/:address/:port/ana", "listAnaStates",
            "ANA groups and their states through a listener")
            .describe("Every group a namespace is in (or the listener names a state for), ascending. Each listener "
                + "is a path; hosts connected through it read these states in the ANA log page (0Ch).")
            .ok(200, new Many(Views.AnaGroup.class))
            .handle(c -> c.read(() -> c.service().anaGroups(c.param("nqn"), c.listener()).stream()
                .map(Views.AnaGroup::of).toList())),
        op("PUT", LISTENERS + "/:transport/:address/:port/ana/:group", "setAnaState",
            "Set an ANA group's state through a listener")
            .describe("optimized, non-optimized, inaccessible, persistent-loss or change (spdk engine: the first three); kept "
                + "in the listener's "
                + "anaStates. Hosts connected through the listener get the ANA change event (AEN, log page 0Ch); "
                + "I/O through it to an inaccessible, persistent-loss or change group fails with the ANA path "
                + "status, so multipath hosts use another path. 400 for a group no namespace is in or a bad state.")
            .body(Bodies.AnaState.class).ok(200, Views.AnaGroup.class)
            .handle(c -> c.change(() -> c.service().setAnaState(c.param("nqn"), c.listener(), c.intParam("group"),
                required(c.body().state, "state")), Views.AnaGroup::of)),
        op("GET", V1 + "/subsystems/:nqn/controllers", "listControllers", "Connected controllers")
            .ok(200, new Many(Views.Controller.class))
            .handle(c -> c.read(() -> ApiRoutes.controllers(c.service().controllers(c.param("nqn"))))),

        op("GET", IO + "/hosts", "listHostIo", "I/O per host NQN, over its controllers")
            .describe("Counts, bytes and latency sums of every host that did I/O (hosts whose last controller went "
                + "stay 5 minutes)." + JAVA_ONLY)
            .noQuery().ok(200, new Many(Views.HostIo.class))
            .handle(c -> c.read(() -> c.api.metrics.hosts().stream().map(Views.HostIo::of).toList())),
        op("GET", IO + "/controllers", "listControllerIo", "I/O per live controller")
            .describe("Every live controller that did I/O, by subsystem and cntlid; a controller that went is gone from "
                + "the list." + JAVA_ONLY)
            .query(ApiRoutes.SUBSYSTEM_QUERY).query(ApiRoutes.HOST_QUERY)
            .ok(200, new Many(Views.ControllerIo.class))
            .handle(c -> c.read(() -> c.api.metrics.controllers(c.query(ApiRoutes.SUBSYSTEM_QUERY),
                c.query(ApiRoutes.HOST_QUERY)).stream().map(Views.ControllerIo::of).toList())),
        op("GET", IO + "/slowest", "listSlowestIo", "The slowest recent I/O commands, slowest first")
            .describe("The 64 slowest of the current minute and of the minute before, each with its namespace, host, "
                + "controller, queue, opcode, LBA range, latency and time." + JAVA_ONLY)
            .query(ApiRoutes.LIMIT_QUERY)
            .ok(200, new Many(Views.SlowIo.class))
            .handle(c -> c.read(() -> c.api.metrics.slowest(c.intQuery(ApiRoutes.LIMIT_QUERY)).stream()
                .map(Views.SlowIo::of).toList())),
        op("GET", NS + "/:nsid/latency", "getNamespaceLatency", "Latency percentiles of a namespace (p50..p99.9)")
            .describe("Reads and writes since the service started, from the namespace's latency histogram "
                + "(interpolated within a bucket, as Prometheus' histogram_quantile does). The spdk engine answers one "
                + "entry, op all: the namespace's I/O (reads, writes and the rest together) since it was added, from "
                + "SPDK's latency histogram of its bdev (buckets at most 12.5 % wide; maxMicros is the upper bound of "
                + "the slowest bucket).")
            .noQuery().ok(200, new Many(Views.Latency.class))
            .handle(c -> c.read(() -> {
                SubsystemConfig s = c.subsystem();
                int nsid = c.namespace().nsid;
                return c.api.metrics.latency(s.nqn, nsid).stream().map(Views.Latency::of).toList();
            })),

        op("GET", REFERRALS, "listReferrals", "Discovery referrals").ok(200, new Many(ReferralConfig.class))
            .handle(c -> c.read(() -> c.service().snapshot().referrals)),
        op("POST", REFERRALS, "addReferral", "Add a referral").body(ReferralConfig.class)
            .ok(201, ReferralConfig.class).fails(409, "The referral exists")
            .handle(c -> c.change(() -> c.service().addReferral(c.body()), x -> x)),
        op("DELETE", REFERRALS + "/:transport/:address/:port", "removeReferral", "Remove a referral")
            .ok(204, null)
            .handle(c -> c.change(() -> c.service().removeReferral(new ReferralConfig(c.param("transport"),
                c.param("address"), c.intParam("port"))), x -> null)),
        op("GET", DISCOVERY_HOSTS, "listDiscoveryHosts", "Hosts with a TLS PSK for the discovery subsystem")
            .describe("Each host and the path of its key file (never the key).")
            .ok(200, new Many(HostKeyConfig.class))
            .handle(c -> c.read(() -> {
                TargetConfig t = c.service().snapshot();
                return t.discovery == null ? List.of() : t.discovery.hostKeys;
            })),
        op("POST", DISCOVERY_HOSTS, "addDiscoveryHost",
            "Give a host a TLS PSK for the discovery subsystem (nvme discover --tls)")
            .describe("Every host may discover; over TLS (a listener with secureChannel required or optional) its "
                + "PSK identity names the discovery NQN, so it needs a key here as on a subsystem (tlsKey, "
                + "tlsKeyDerivation; no DH-HMAC-CHAP keys). java engine only (spdk: 400).")
            .body(Bodies.DiscoveryHost.class).ok(201, HostKeyConfig.class)
            .fails(409, "The host has a key on the discovery subsystem already")
            .handle(c -> c.change(() -> ApiRoutes.addDiscoveryHost(c), x -> x)),
        op("DELETE", DISCOVERY_HOSTS + "/:hostnqn", "removeDiscoveryHost",
            "Take a host's TLS PSK off the discovery subsystem (its discovery controllers are disconnected)")
            .ok(204, null)
            .handle(c -> c.change(() -> c.service().removeDiscoveryHost(c.param("hostnqn")), x -> null)),

        op("GET", QOS_GROUPS, "listQosGroups", "QoS groups (tenants)").ok(200, new Many(QosGroupConfig.class))
            .handle(c -> c.read(() -> c.service().snapshot().qosGroups)),
        op("POST", QOS_GROUPS, "addQosGroup", "Create a QoS group (a tenant), live")
            .describe("Its namespaces' I/O together shares its limits. " + QOS_NOTE + " " + QOS_GROUP_NOTE)
            .body(QosGroupConfig.class).ok(201, QosGroupConfig.class).fails(409, "A group of that name exists")
            .handle(c -> c.change(() -> c.service().addQosGroup(c.body()), g -> g)),
        op("GET", QOS_GROUPS + "/:name", "getQosGroup", "One QoS group").ok(200, QosGroupConfig.class)
            .handle(c -> c.read(() -> c.api.qosGroup(c.param("name")))),
        op("PUT", QOS_GROUPS + "/:name", "setQosGroup", "Replace a QoS group's namespaces and limits, live")
            .describe(QOS_NOTE + " " + QOS_GROUP_NOTE + " The body's name is absent or the path's.")
            .body(QosGroupConfig.class).ok(200, QosGroupConfig.class)
            .handle(c -> c.change(() -> c.service().setQosGroup(ApiRoutes.qosGroup(c.body(), c.param("name"))),
                g -> g)),
        op("DELETE", QOS_GROUPS + "/:name", "removeQosGroup", "Remove a QoS group").ok(204, null)
            .handle(c -> c.change(() -> c.service().removeQosGroup(c.param("name")), x -> null)),

        op("GET", V1 + "/transports", "getTransports", "Transport options: stored (pending) and live")
            .describe("tcp and rdma are the stored options, which the next start uses; live holds the ones the "
                + "running target uses.").ok(200, Views.Transports.class)
            .handle(c -> c.read(c.api::transports)),
        op("PUT", V1 + "/transports/tcp", "setTcpOptions", "Store the TCP options (applied at the next start)")
            .describe(RESTART_NOTE).body(TcpTransportConfig.class).ok(200, Views.TcpChange.class)
            .handle(c -> c.change(() -> c.service().setTcpOptions(c.body()), t -> {
                List<String> fields = c.service().restartFields(t);
                return new Views.TcpChange(!fields.isEmpty(), fields, t.tcp);
            })),
        op("PUT", V1 + "/transports/rdma", "setRdmaOptions", "Store the RDMA options (applied at the next start)")
            .describe(RESTART_NOTE).body(RdmaTransportConfig.class).ok(200, Views.RdmaChange.class)
            .handle(c -> c.change(() -> c.service().setRdmaOptions(c.body()), t -> {
                List<String> fields = c.service().restartFields(t);
                return new Views.RdmaChange(!fields.isEmpty(), fields, t.rdma);
            })),

        op("GET", V1 + "/config", "getConfig", "The whole configuration document")
            .describe("ETag identifies this version of the document (send it as If-Match with a PUT). "
                + RESTART_REQUIRED + " lists the start-up settings whose stored value waits for the next start.")
            .ok(200, TargetConfig.class, ETAG, RESTART_REQUIRED)
            .handle(c -> c.read(() -> c.api.documentAnswer(c.service().snapshot()))),
        op("PUT", V1 + "/config", "putConfig", "Replace the whole document")
            .describe("Validated, then applied as a diff, as a whole or not at all. With If-Match (the ETag of a "
                + "GET, or *) the document is replaced only if it is still that version, else 412; without "
                + "If-Match it is replaced unconditionally. engine, cores, idleStrategy, socketIo, tcp, rdma, spdk and api "
                + "are stored and apply at the next start: " + RESTART_REQUIRED + " names those that differ from "
                + "the ones in effect.")
            .ifMatch().body(TargetConfig.class).ok(200, TargetConfig.class, ETAG, RESTART_REQUIRED)
            .fails(409, "A listener cannot bind or a bdev is in use")
            .fails(412, "If-Match does not match the document's current ETag")
            .handle(c -> c.change(() -> c.service().importConfig(c.body(), ApiRoutes.ifMatch(c.ctx)),
                c.api::documentAnswer)));

    private ApiContract() {
    }

    /** Where the build puts the generated document (see {@link OpenApiGenerator}). */
    static final String RESOURCE = "/openapi.json";

    /** The document the build generated, read at the first call. */
    static String document() {
        return Holder.TEXT;
    }

    private static final class Holder {
        static final String TEXT = read();

        private static String read() {
            try (InputStream in = ApiContract.class.getResourceAsStream(RESOURCE)) {
                if (in == null) {
                    throw new IllegalStateException(RESOURCE + " is missing from the build (mvn process-classes "
                        + "generates it)");
                }
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** The methods a request path has (for 405's Allow), in the order of {@link #OPERATIONS}. */
    static Set<String> allowed(String path) {
        Set<String> out = new LinkedHashSet<>();
        for (Op<?> op : OPERATIONS) {
            if (pattern(op.path).matcher(path).matches()) {
                out.add(op.method);
            }
        }
        return out;
    }

    private static Pattern pattern(String routerPath) {
        return Pattern.compile(routerPath.replaceAll(":[A-Za-z]+", "[^/]+"));
    }
}
