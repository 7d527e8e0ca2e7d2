package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * A transport address on the command line, spelled as nvme-cli does: {@code -t/--transport},
 * {@code -a/--traddr}, {@code -s/--trsvcid}. {@code -a} also takes ADDR:PORT ({@code [::1]:4421} for IPv6),
 * and {@code -s} then may be left out. Addresses are written {@code 127.0.0.1:4420} and {@code [::1]:4421}
 * in every human output ({@link #hostPort}).
 */
abstract class Address {
    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(names = {"-t", "--transport"}, paramLabel = "TRANSPORT", defaultValue = "tcp",
        description = "tcp or rdma (default: ${DEFAULT-VALUE}).")
    String transport;

    @Option(names = {"-a", "--traddr"}, required = true, paramLabel = "ADDR",
        description = "IPv4 or IPv6 literal; ADDR:PORT ([::1]:4421 for IPv6) gives the port too.")
    String traddr;

    /** -s (or its old spelling --port) as given, or null; the subclass declares -s with its default port. */
    Integer trsvcid;

    @Option(names = "--port", hidden = true, paramLabel = "PORT", description = "Old spelling of --trsvcid.")
    void port(int port) {
        trsvcid = port;
    }

    /** The port when neither -s nor ADDR:PORT gives one. */
    abstract int defaultPort();

    /** The address as the API takes it: the literal without brackets, and the port from -s or from -a. */
    Endpoint endpoint() {
        String address = traddr.trim();
        Integer port = null;
        if (address.startsWith("[")) {
            int close = address.indexOf(']');
            if (close < 0) {
                throw usage("-a " + traddr + ": no ']' after an IPv6 address");
            }
            String rest = address.substring(close + 1);
            address = address.substring(1, close);
            if (rest.startsWith(":")) {
                port = port(rest.substring(1));
            } else if (!rest.isEmpty()) {
                throw usage("-a " + traddr + ": expected [ADDR] or [ADDR]:PORT");
            }
        } else if (address.indexOf(':') >= 0 && address.indexOf(':') == address.lastIndexOf(':')) {
            // one colon: IPv4:PORT (an IPv6 literal has at least two)
            port = port(address.substring(address.indexOf(':') + 1));
            address = address.substring(0, address.indexOf(':'));
        }
        Integer s = trsvcid;
        if (port != null && s != null && !port.equals(s)) {
            throw usage("-a " + traddr + " names port " + port + " but -s says " + s);
        }
        return new Endpoint(transport, address, port != null ? port : s != null ? s : defaultPort());
    }

    private int port(String text) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw usage("-a " + traddr + ": '" + text + "' is not a port number");
        }
    }

    private ParameterException usage(String message) {
        return new ParameterException(mixee.commandLine(), message);
    }

    /** "127.0.0.1:4420", "[::1]:4421": an address and port as written in every human output. */
    static String hostPort(String address, Object port) {
        return (address != null && address.indexOf(':') >= 0 ? "[" + address + "]" : address) + ":" + port;
    }

    /** "tcp 127.0.0.1:4420" for a listener or referral object of the API. */
    static String describe(JsonNode l) {
        return l.path("transport").asText() + " " + hostPort(l.path("address").asText(), port(l));
    }

    /** The port a listener serves on: its bound port where the API gives one (a port-0 listener's pick). */
    static String port(JsonNode l) {
        return l.hasNonNull("boundPort") ? l.get("boundPort").asText() : l.path("port").asText();
    }

    /**
     * A peer's socket address as the API gives it (Java's form: "/127.0.0.1:51268", "/[0:0:0:0:0:0:0:1]:51268",
     * or with a host name before the slash) as "127.0.0.1:51268" or "[::1]:51268".
     */
    static String peer(String address) {
        if (address == null) {
            return null;
        }
        String a = address.substring(address.indexOf('/') + 1);
        int colon = a.lastIndexOf(':');
        if (colon < 0) {
            return a;
        }
        String host = a.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return hostPort(compress(host), a.substring(colon + 1));
    }

    /** An IPv6 literal in its short form, RFC 5952 (0:0:0:0:0:0:0:1 → ::1); anything else unchanged. */
    static String compress(String host) {
        String[] g = host.split(":", -1);
        if (g.length != 8 || host.contains("::")) {
            return host;
        }
        int best = -1;
        int bestLen = 1;  // a single zero group stays "0"
        for (int i = 0; i < 8; i++) {
            int j = i;
            while (j < 8 && g[j].matches("0+")) {
                j++;
            }
            if (j - i > bestLen) {
                best = i;
                bestLen = j - i;
            }
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == best) {
                out.append("::");
                i += bestLen - 1;
                continue;
            }
            if (out.length() > 0 && out.charAt(out.length() - 1) != ':') {
                out.append(':');
            }
            out.append(g[i].replaceFirst("^0+(?=.)", "").toLowerCase(java.util.Locale.ROOT));
        }
        return out.toString();
    }

    /** A transport address as the API takes it. */
    record Endpoint(String transport, String address, int port) {
        ObjectNode body(ObjectNode node) {
            return node.put("transport", transport).put("address", address).put("port", port);
        }

        /** ".../{transport}/{address}/{port}" for DELETE. */
        String path(String base) {
            return base + "/" + ApiClient.seg(transport) + "/" + ApiClient.seg(address) + "/" + port;
        }

        @Override
        public String toString() {
            return transport + " " + hostPort(address, port);
        }
    }

    /** A subsystem's listener: port 4420 unless given. */
    static final class Listener extends Address {
        @Option(names = {"-s", "--trsvcid"}, paramLabel = "PORT", description = "Port (default: 4420).")
        void trsvcid(int port) {
            trsvcid = port;
        }

        @Override
        int defaultPort() {
            return 4420;
        }
    }

    /** A discovery referral: port 8009 (the discovery port) unless given. */
    static final class Referral extends Address {
        @Option(names = {"-s", "--trsvcid"}, paramLabel = "PORT", description = "Port (default: 8009, the "
            + "discovery port).")
        void trsvcid(int port) {
            trsvcid = port;
        }

        @Override
        int defaultPort() {
            return 8009;
        }
    }
}
