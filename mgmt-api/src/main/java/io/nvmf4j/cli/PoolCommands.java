package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code nvmfctl pool}, {@code volume} and {@code snapshot}: pools and what is carved out of them
 * ({@code /api/v1/pools}, docs/volumes.md).
 */
final class PoolCommands {
    static final String PATH = ApiClient.V1 + "/pools";

    private PoolCommands() {
    }

    static String pool(String pool) {
        return PATH + "/" + ApiClient.seg(pool);
    }

    static String volumes(String pool) {
        return pool(pool) + "/volumes";
    }

    static String volume(String pool, String volume) {
        return volumes(pool) + "/" + ApiClient.seg(volume);
    }

    static String snapshots(String pool, String volume) {
        return volume(pool, volume) + "/snapshots";
    }

    /** The pool option of the volume and snapshot commands. */
    abstract static class InPool extends ApiCommand {
        @Option(names = {"-p", "--pool"}, required = true, paramLabel = "POOL", description = "The pool.")
        String pool;
    }

    /** The pool and volume options of the snapshot commands. */
    abstract static class OfVolume extends InPool {
        @Option(names = "--volume", required = true, paramLabel = "VOLUME", description = "The volume.")
        String volume;
    }

    @Command(name = "pool", description = "Storage pools volumes are carved from: list, get, create, delete.",
        subcommands = {Pools.List.class, Pools.Get.class, Pools.Create.class, Pools.Delete.class})
    static final class Pools extends Group {
        @Command(name = "list", description = "List pools with their capacity.")
        static final class List extends ApiCommand {
            @Override
            public Integer call() {
                JsonNode pools = api().get(PATH);
                if (json()) {
                    printJson(pools);
                    return 0;
                }
                Table t = new Table("NAME", "KIND", "SIZE", "USED", "FREE", "WARN", "CROSSINGS", "VOLUMES", "PATH");
                for (JsonNode p : pools) {
                    t.row(p.get("name"), p.get("kind"), Table.size(p.path("size").asLong()),
                        Table.size(p.path("used").asLong()), Table.size(p.path("free").asLong()),
                        p.path("warnPercent").asInt() + "%", p.get("watermarkCrossings"), p.get("volumes"),
                        p.get("path"));
                }
                t.print(out());
                return 0;
            }
        }

        @Command(name = "get", description = "Show one pool.")
        static final class Get extends ApiCommand {
            @Parameters(paramLabel = "POOL", description = "The pool.")
            String name;

            @Override
            public Integer call() {
                printOne(api().get(pool(name)));
                return 0;
            }
        }

        @Command(name = "create", description = {"Add an empty pool: a directory under storage.fileDirectories on a "
            + "file system that reflinks (XFS with reflink=1, or btrfs), or (--rados-pool) a RADOS pool without images "
            + "whose RBD images become the volumes.",
            "Example: nvmfctl pool create p1 --path /srv/nvmf4j/p1",
            "         nvmfctl pool create p2 --rados-pool vols --ceph-conf /etc/ceph/ceph.conf --client client.nvmf4j "
                + "--keyring /etc/ceph/ceph.client.nvmf4j.keyring"})
        static final class Create extends ApiCommand {
            @Parameters(paramLabel = "POOL", description = "A name for it (letters, digits, '_', '-', '.').")
            String name;

            @Option(names = "--path", paramLabel = "DIR", description = "reflink-dir: its directory (it exists).")
            String path;

            @Option(names = "--rados-pool", paramLabel = "POOL", description = "rbd: the RADOS pool (no images in it).")
            String radosPool;

            @Option(names = "--ceph-conf", paramLabel = "FILE", description = "rbd: the Ceph config file.")
            String cephConf;

            @Option(names = "--client", paramLabel = "client.NAME",
                description = "rbd: the Ceph client (default client.admin).")
            String client;

            @Option(names = "--keyring", paramLabel = "FILE", description = "rbd: the client's keyring.")
            String keyring;

            @Option(names = "--warn-percent", paramLabel = "N",
                description = "Warn when the pool's use rises above N percent (default 85).")
            Integer warnPercent;

            @Override
            public Integer call() {
                if ((path == null) == (radosPool == null)) {
                    throw CliException.usage("a pool needs --path (reflink-dir) or --rados-pool (rbd), one of them");
                }
                if (path != null && (cephConf != null || client != null || keyring != null)) {
                    throw CliException.usage("--ceph-conf, --client and --keyring are for rbd pools (--rados-pool)");
                }
                ObjectNode body = object().put("name", name);
                if (path != null) {
                    body.put("kind", "reflink-dir").put("path", path);
                } else {
                    body.put("kind", "rbd").put("pool", radosPool);
                    BdevCommands.putIfSet(body, "cephConf", cephConf);
                    BdevCommands.putIfSet(body, "clientName", client);
                    BdevCommands.putIfSet(body, "keyring", keyring);
                }
                if (warnPercent != null) {
                    body.put("warnPercent", warnPercent);
                }
                printOne(api().post(PATH, body));
                return 0;
            }
        }

        @Command(name = "delete", description = "Remove an empty pool (its directory stays).")
        static final class Delete extends ApiCommand {
            @Parameters(paramLabel = "POOL", description = "The pool.")
            String name;

            @Override
            public Integer call() {
                api().delete(pool(name));
                done("deleted pool " + name, "deleted", object().put("pool", name));
                return 0;
            }
        }
    }

    @Command(name = "volume", description = "Volumes of a pool: list, get, create, resize, delete.",
        subcommands = {Volumes.List.class, Volumes.Get.class, Volumes.Create.class, Volumes.Resize.class,
            Volumes.Delete.class})
    static final class Volumes extends Group {
        @Command(name = "list", description = "List the volumes of a pool with provisioned and allocated bytes.")
        static final class List extends InPool {
            @Override
            public Integer call() {
                JsonNode volumes = api().get(volumes(pool));
                if (json()) {
                    printJson(volumes);
                    return 0;
                }
                Table t = new Table("NAME", "SIZE", "ALLOCATED", "THIN", "ORIGIN", "SNAPSHOTS", "NAMESPACE");
                for (JsonNode v : volumes) {
                    t.row(v.get("name"), Table.size(v.path("provisionedBytes").asLong()),
                        Table.size(v.path("allocatedBytes").asLong()), v.path("thin").asBoolean() ? "yes" : "no",
                        v.get("origin"), v.path("snapshots").size(), v.get("namespace"));
                }
                t.print(out());
                return 0;
            }
        }

        @Command(name = "get", description = "Show one volume.")
        static final class Get extends InPool {
            @Parameters(paramLabel = "VOLUME", description = "The volume.")
            String name;

            @Override
            public Integer call() {
                printOne(api().get(volume(pool, name)));
                return 0;
            }
        }

        @Command(name = "create", description = {"Create a volume (thin unless --thick); a namespace uses it as "
            + "bdev POOL/VOLUME.",
            "Example: nvmfctl volume create -p p1 v1 --size 100G",
            "         nvmfctl ns add -n nqn.2026-11.io.nvmf4j:default -b p1/v1"})
        static final class Create extends InPool {
            @Parameters(paramLabel = "VOLUME", description = "A name for it (letters, digits, '_', '-', '.').")
            String name;

            @Option(names = "--size", required = true, paramLabel = "SIZE", converter = ByteSize.class,
                description = "Its size in bytes, or with K, M, G, T (binary).")
            long size;

            @Option(names = "--block-size", paramLabel = "BYTES", description = "512 or 4096 (default 512).")
            Integer blockSize;

            @Option(names = "--thick", description = "Allocate every block now.")
            boolean thick;

            @Override
            public Integer call() {
                ObjectNode body = object().put("name", name).put("size", size);
                if (blockSize != null) {
                    body.put("blockSize", blockSize);
                }
                if (thick) {
                    body.put("thick", true);
                }
                printOne(api().post(volumes(pool), body));
                return 0;
            }
        }

        @Command(name = "resize", description = "Resize a volume: a grow is live (hosts see the new size); a shrink "
            + "is refused while a namespace uses it.")
        static final class Resize extends InPool {
            @Parameters(paramLabel = "VOLUME", description = "The volume.")
            String name;

            @Option(names = "--size", required = true, paramLabel = "SIZE", converter = ByteSize.class,
                description = "The new size in bytes, or with K, M, G, T (binary).")
            long size;

            @Override
            public Integer call() {
                printOne(api().patch(volume(pool, name), object().put("size", size)));
                return 0;
            }
        }

        @Command(name = "delete", description = "Delete a volume (refused while a namespace uses it or it has "
            + "snapshots).")
        static final class Delete extends InPool {
            @Parameters(paramLabel = "VOLUME", description = "The volume.")
            String name;

            @Override
            public Integer call() {
                api().delete(volume(pool, name));
                done("deleted volume " + name + " of pool " + pool, "deleted",
                    object().put("pool", pool).put("volume", name));
                return 0;
            }
        }
    }

    @Command(name = "snapshot", description = "Snapshots of volumes: list, create, delete, clone, group.",
        subcommands = {Snapshots.List.class, Snapshots.Create.class, Snapshots.Delete.class, Snapshots.Clone.class,
            Snapshots.Group.class})
    static final class Snapshots extends io.nvmf4j.cli.Group {
        @Command(name = "list", description = "List the snapshots of a volume, oldest first.")
        static final class List extends OfVolume {
            @Override
            public Integer call() {
                JsonNode snapshots = api().get(snapshots(pool, volume));
                if (json()) {
                    printJson(snapshots);
                    return 0;
                }
                Table t = new Table("NAME", "SIZE", "ALLOCATED", "CREATED", "GROUP", "CLONES");
                for (JsonNode s : snapshots) {
                    t.row(s.get("name"), Table.size(s.path("sizeBytes").asLong()),
                        Table.size(s.path("allocatedBytes").asLong()), s.get("created"), s.get("group"),
                        s.get("clones"));
                }
                t.print(out());
                return 0;
            }
        }

        @Command(name = "create", description = {"Take a crash-consistent snapshot of a volume (writes to its "
            + "namespace are held while the copy is made).",
            "Example: nvmfctl snapshot create -p p1 --volume v1 s1"})
        static final class Create extends OfVolume {
            @Parameters(paramLabel = "SNAPSHOT", description = "A name for it.")
            String name;

            @Override
            public Integer call() {
                taken(this, api().post(snapshots(pool, volume), object().put("name", name)));
                return 0;
            }
        }

        @Command(name = "delete", description = "Delete a snapshot (refused while a volume was cloned from it).")
        static final class Delete extends OfVolume {
            @Parameters(paramLabel = "SNAPSHOT", description = "The snapshot.")
            String name;

            @Override
            public Integer call() {
                api().delete(snapshots(pool, volume) + "/" + ApiClient.seg(name));
                done("deleted snapshot " + volume + "@" + name + " of pool " + pool, "deleted",
                    object().put("pool", pool).put("volume", volume).put("snapshot", name));
                return 0;
            }
        }

        @Command(name = "clone", description = {"Make a writable thin volume from a snapshot, exportable at once.",
            "Example: nvmfctl snapshot clone -p p1 --volume v1 s1 v1-test"})
        static final class Clone extends OfVolume {
            @Parameters(index = "0", paramLabel = "SNAPSHOT", description = "The snapshot.")
            String snapshot;

            @Parameters(index = "1", paramLabel = "CLONE", description = "The new volume's name.")
            String name;

            @Override
            public Integer call() {
                printOne(api().post(snapshots(pool, volume) + "/" + ApiClient.seg(snapshot) + "/clone",
                    object().put("name", name)));
                return 0;
            }
        }

        @Command(name = "group", description = {"Snapshot several volumes of a pool at one instant (a write order "
            + "across them is kept); each gets a snapshot of that name.",
            "Example: nvmfctl snapshot group -p p1 g1 data log"})
        static final class Group extends InPool {
            @Parameters(index = "0", paramLabel = "SNAPSHOT", description = "The snapshots' (and the group's) name.")
            String name;

            @Parameters(index = "1..*", arity = "1..*", paramLabel = "VOLUME", description = "The volumes.")
            java.util.List<String> volumes;

            @Override
            public Integer call() {
                ObjectNode body = object().put("name", name);
                ArrayNode list = body.putArray("volumes");
                volumes.forEach(list::add);
                taken(this, api().post(pool(pool) + "/group-snapshots", body));
                return 0;
            }
        }
    }

    /** What a snapshot call took: the API's answer (--json), or a table of the snapshots and the pause. */
    private static void taken(ApiCommand c, JsonNode answer) {
        if (c.json()) {
            c.printJson(answer);
            return;
        }
        Table t = new Table("VOLUME", "SNAPSHOT", "SIZE", "CREATED");
        for (JsonNode s : answer.path("snapshots")) {
            t.row(s.get("volume"), s.get("name"), Table.size(s.path("sizeBytes").asLong()), s.get("created"));
        }
        t.print(c.out());
        c.say("writes held for " + answer.path("pauseNanos").asLong() / 1000 + " us");
    }
}
