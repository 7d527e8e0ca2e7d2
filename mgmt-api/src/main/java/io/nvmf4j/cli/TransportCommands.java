package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code nvmfctl transport}: transport options ({@code /api/v1/transports}); stored, applied at the next start. */
@Command(name = "transport", description = "Transport options: get, set (stored; applied at the next start).",
    subcommands = {TransportCommands.Get.class, TransportCommands.Set.class})
final class TransportCommands extends Group {
    static final String PATH = ApiClient.V1 + "/transports";

    /** Nested objects as "a.b.c  value" keys, in their order. */
    static void flatten(String prefix, JsonNode node, ObjectNode into) {
        node.fields().forEachRemaining(e -> {
            if (e.getValue().isObject()) {
                flatten(prefix + e.getKey() + ".", e.getValue(), into);
            } else {
                into.set(prefix + e.getKey(), e.getValue());
            }
        });
    }

    @Command(name = "get", description = "Show the options of every transport.")
    static final class Get extends ApiCommand {
        @Override
        public Integer call() {
            JsonNode all = api().get(PATH);
            if (json()) {
                printJson(all);
                return 0;
            }
            ObjectNode flat = object();
            flatten("", all, flat);
            Table.printObject(out(), flat);
            return 0;
        }
    }

    @Command(name = "set", description = {"Change options of a transport; the others keep their value.",
        "Example: nvmfctl transport set tcp --max-queue-depth 256"})
    static final class Set extends ApiCommand {
        @Parameters(paramLabel = "TRANSPORT", description = "tcp (the only transport with options so far).")
        String transport;

        @Option(names = "--in-capsule-data-size", paramLabel = "BYTES",
            description = "In-capsule data size of I/O queues (IOCCSZ is derived from it).")
        Integer inCapsuleDataSize;

        @Option(names = "--max-queue-depth", paramLabel = "N",
            description = "Largest I/O queue size (entries) a host may ask for.")
        Integer maxQueueDepth;

        @Option(names = "--max-io-queues", paramLabel = "N", description = "Most I/O queues per controller.")
        Integer maxIoQueues;

        @Option(names = "--mdts-bytes", paramLabel = "BYTES",
            description = "Maximum data transfer size: a power of two, a multiple of 4 KiB.")
        Integer mdtsBytes;

        @Option(names = "--max-h2c-data", paramLabel = "BYTES",
            description = "Largest H2CData PDU payload accepted (MAXH2CDATA).")
        Integer maxH2cData;

        @Option(names = "--c2h-success", paramLabel = "true|false", arity = "1",
            description = "Send C2HData with the SUCCESS flag (no CapsuleResp) unless the host disabled it.")
        Boolean c2hSuccess;

        @Option(names = "--c2h-success-with-sq-flow-control", paramLabel = "true|false", arity = "1",
            description = "Also SUCCESS to hosts that did not disable SQ flow control, as SPDK's nvmf_tgt does"
                + " (one PDU less per read; those reads report no SQHD).")
        Boolean c2hSuccessWithSqFlowControl;

        @Option(names = "--connect-timeout-ms", paramLabel = "MS", description = "Close a connection without ICReq and Connect within MS; 0 = no limit.")
        Integer connectTimeoutMs;

        @Override
        public Integer call() {
            if (!transport.equals("tcp")) {
                throw CliException.usage("only the tcp transport has options, got '" + transport + "'");
            }
            ObjectNode tcp = stored(api().get(PATH).path("tcp"));
            put(tcp, "inCapsuleDataSize", inCapsuleDataSize);
            put(tcp, "maxQueueDepth", maxQueueDepth);
            put(tcp, "maxIoQueues", maxIoQueues);
            put(tcp, "mdtsBytes", mdtsBytes);
            put(tcp, "maxH2cData", maxH2cData);
            put(tcp, "connectTimeoutMs", connectTimeoutMs);
            if (c2hSuccess != null) {
                tcp.put("c2hSuccess", c2hSuccess);
            }
            if (c2hSuccessWithSqFlowControl != null) {
                tcp.put("c2hSuccessWithSqFlowControl", c2hSuccessWithSqFlowControl);
            }
            JsonNode answer = api().put(PATH + "/tcp", tcp);
            if (json()) {
                printJson(answer);
                return 0;
            }
            out().println("stored; applies at the next start of the service");
            ObjectNode flat = object();
            flatten("tcp.", answer.has("tcp") ? answer.get("tcp") : answer, flat);
            Table.printObject(out(), flat);
            return 0;
        }

        /**
         * The options as stored, to change and send back whole: the object itself, or its {@code pending}
         * (else {@code live}) part where the API shows both the running and the stored values.
         */
        private static ObjectNode stored(JsonNode tcp) {
            if (!tcp.isObject()) {
                throw new CliException(CliException.UNAVAILABLE, "the service's GET " + PATH + " has no tcp object");
            }
            JsonNode part = tcp.path("pending").isObject() ? tcp.get("pending")
                : tcp.path("live").isObject() ? tcp.get("live") : tcp;
            return (ObjectNode) part.deepCopy();
        }

        private static void put(ObjectNode node, String field, Integer value) {
            if (value != null) {
                node.put(field, value);
            }
        }
    }
}
