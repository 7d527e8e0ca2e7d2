package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code nvmfctl bdev}: block devices ({@code /api/v1/bdevs}). */
@Command(name = "bdev", description = "Block devices: list, get, create, grow, delete.",
    subcommands = {BdevCommands.List.class, BdevCommands.Get.class, BdevCommands.Create.class,
        BdevCommands.Grow.class, BdevCommands.Delete.class})
final class BdevCommands extends Group {
    static final String PATH = ApiClient.V1 + "/bdevs";

    static String path(String name) {
        return PATH + "/" + ApiClient.seg(name);
    }

    /** The capacity: a size in bytes or a number of blocks. */
    static final class Capacity {
        @Option(names = "--size", paramLabel = "SIZE", converter = ByteSize.class,
            description = "Capacity in bytes, or with K, M, G, T (binary).")
        Long size;

        @Option(names = "--num-blocks", paramLabel = "N", description = "Capacity in blocks.")
        Long numBlocks;

        long blocks(int blockSize) {
            return numBlocks != null ? numBlocks : ByteSize.blocks(size, blockSize);
        }
    }

    @Command(name = "list", description = "List block devices and the namespace each backs.")
    static final class List extends ApiCommand {
        @Override
        public Integer call() {
            JsonNode bdevs = api().get(PATH);
            if (json()) {
                printJson(bdevs);
                return 0;
            }
            Table t = new Table("NAME", "TYPE", "BLOCK", "BLOCKS", "SIZE", "USED-BY", "PATH");
            for (JsonNode b : bdevs) {
                long blocks = b.path("numBlocks").asLong();
                int block = b.path("blockSize").asInt();
                String size = blocks == 0 && "file".equals(b.path("type").asText()) ? "file size"
                    : Table.size(blocks * block);
                t.row(b.get("name"), b.get("type"), block, blocks, size, b.get("usedBy"), b.get("path"));
            }
            t.print(out());
            return 0;
        }
    }

    @Command(name = "get", description = "Show one block device.")
    static final class Get extends ApiCommand {
        @Parameters(paramLabel = "NAME", description = "The block device.")
        String name;

        @Override
        public Integer call() {
            printOne(api().get(path(name)));
            return 0;
        }
    }

    @Command(name = "create", description = {"Create a block device: malloc (RAM), null (discards writes, "
        + "reads zeros), file (regular file or block device; without a size it takes the file's size) or rbd "
        + "(a Ceph RBD image; without a size it takes the image's size).",
        "Example: nvmfctl bdev create malloc m1 --size 64M",
        "         nvmfctl bdev create file f1 --path /dev/sdb --block-size 4096 --direct-io",
        "         nvmfctl bdev create rbd r1 --pool rbd --image vol1 --ceph-conf /etc/ceph/ceph.conf "
            + "--client client.nvmf4j --keyring /etc/ceph/ceph.client.nvmf4j.keyring --create --size 10G",
        "         nvmfctl bdev create rbd gw1 --pool rbd --image vol1 --client client.nvmf4j --exclusive-lock"})
    static final class Create extends ApiCommand {
        @Parameters(index = "0", paramLabel = "TYPE", description = "malloc, null, file or rbd.")
        String type;

        @Parameters(index = "1", paramLabel = "NAME", description = "A name for it (letters, digits, '_', '-', '.').")
        String name;

        @ArgGroup(exclusive = true, multiplicity = "0..1")
        Capacity capacity;

        @Option(names = "--block-size", paramLabel = "BYTES", defaultValue = "512",
            description = "Logical block size: 512 or 4096 (default: ${DEFAULT-VALUE}).")
        int blockSize;

        @Option(names = "--path", paramLabel = "PATH", description = "file: the file or block device.")
        String path;

        @Option(names = "--direct-io", description = "file: open with O_DIRECT (needs --block-size 4096).")
        boolean directIo;

        @Option(names = "--pool", paramLabel = "POOL", description = "rbd: the RADOS pool.")
        String pool;

        @Option(names = "--image", paramLabel = "IMAGE", description = "rbd: the RBD image.")
        String image;

        @Option(names = "--ceph-conf", paramLabel = "FILE", description = "rbd: the Ceph config file.")
        String cephConf;

        @Option(names = "--client", paramLabel = "client.NAME", description = "rbd: the Ceph client (default client.admin).")
        String client;

        @Option(names = "--keyring", paramLabel = "FILE", description = "rbd: the client's keyring.")
        String keyring;

        @Option(names = "--create", description = "rbd: create the image (--size) when it does not exist.")
        boolean create;

        @Option(names = "--exclusive-lock", description = "rbd: hold the image's exclusive lock while a listener is "
            + "optimized for the namespace's ANA group, give it up when none is (two gateways on one image).")
        boolean exclusiveLock;

        @Option(names = "--osd-op-timeout", paramLabel = "SECONDS", description = "rbd: how long an I/O waits for an "
            + "OSD before it ends with Command Interrupted (1-60; default 45, above Ceph's own failure detection).")
        Integer osdOpTimeout;

        @Option(names = "--cache", description = "rbd: librbd's cache on (off by default); only for an image one "
            + "gateway serves (refused with --exclusive-lock or under shared reservations).")
        boolean cache;

        @Override
        public Integer call() {
            if (!type.equals("malloc") && !type.equals("null") && !type.equals("file") && !type.equals("rbd")) {
                throw CliException.usage("TYPE must be malloc, null, file or rbd, got '" + type + "'");
            }
            boolean rbd = type.equals("rbd");
            if (!rbd && (pool != null || image != null || cephConf != null || client != null || keyring != null
                || create || exclusiveLock || osdOpTimeout != null || cache)) {
                throw CliException.usage("--pool, --image, --ceph-conf, --client, --keyring, --create, "
                    + "--exclusive-lock, --osd-op-timeout and --cache are for rbd bdevs only");
            }
            if (rbd && (pool == null || image == null)) {
                throw CliException.usage("an rbd bdev needs --pool and --image");
            }
            if (!type.equals("file") && (path != null || directIo)) {
                throw CliException.usage("--path and --direct-io are for file bdevs only");
            }
            if (type.equals("file") && path == null) {
                throw CliException.usage("a file bdev needs --path");
            }
            if (!type.equals("file") && !rbd && capacity == null) {
                throw CliException.usage("a " + type + " bdev needs --size or --num-blocks");
            }
            ObjectNode body = object().put("name", name).put("type", type).put("blockSize", blockSize)
                .put("numBlocks", capacity == null ? 0 : capacity.blocks(blockSize));
            if (path != null) {
                body.put("path", path).put("directIo", directIo);
            }
            if (rbd) {
                body.put("pool", pool).put("image", image).put("create", create);
                putIfSet(body, "cephConf", cephConf);
                putIfSet(body, "clientName", client);
                putIfSet(body, "keyring", keyring);
                if (exclusiveLock) {
                    body.put("exclusiveLock", true);
                }
                if (osdOpTimeout != null) {
                    body.put("osdOpTimeoutSeconds", osdOpTimeout); // its range is the service's to check
                }
                if (cache) {
                    body.put("cache", true);
                }
            }
            printOne(api().post(PATH, body));
            return 0;
        }
    }

    static void putIfSet(ObjectNode body, String field, String value) {
        if (value != null) {
            body.put(field, value);
        }
    }

    @Command(name = "grow", description = "Grow a block device (namespaces on it are resized; never shrinks).")
    static final class Grow extends ApiCommand {
        @Parameters(paramLabel = "NAME", description = "The block device.")
        String name;

        @ArgGroup(exclusive = true, multiplicity = "1")
        Capacity capacity;

        @Override
        public Integer call() {
            long blocks = capacity.numBlocks != null ? capacity.numBlocks
                : ByteSize.blocks(capacity.size, api().get(path(name)).path("blockSize").asInt());
            printOne(api().patch(path(name), object().put("numBlocks", blocks)));
            return 0;
        }
    }

    @Command(name = "delete", description = "Delete a block device (refused while a namespace uses it).")
    static final class Delete extends ApiCommand {
        @Parameters(paramLabel = "NAME", description = "The block device.")
        String name;

        @Override
        public Integer call() {
            api().delete(path(name));
            done("deleted bdev " + name, "deleted", object().put("bdev", name));
            return 0;
        }
    }
}
