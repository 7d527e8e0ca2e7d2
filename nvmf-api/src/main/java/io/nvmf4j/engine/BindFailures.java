package io.nvmf4j.engine;

import io.nvmf4j.config.IpAddresses;

import java.net.BindException;
import java.util.Locale;

/**
 * A failed bind in plain words: {@code address 127.0.0.1:4420 is already in use}, never the socket library's
 * text ({@code bind(..) failed with error(-98): Address already in use}). Both engines use it.
 */
public final class BindFailures {
    private BindFailures() {
    }

    /** Why {@code address:port} could not be bound, from the failure {@code cause}. */
    public static String describe(String address, int port, Throwable cause) {
        String where = hostPort(address, port);
        String text = cause == null || cause.getMessage() == null ? "" : cause.getMessage().toLowerCase(Locale.ROOT);
        if (text.contains("address already in use") || text.contains("(-98)") || text.contains("eaddrinuse")) {
            return "address " + where + " is already in use";
        }
        if (text.contains("cannot assign requested address") || text.contains("(-99)")
            || text.contains("eaddrnotavail")) {
            return "address " + address + " is not an address of this host";
        }
        if (text.contains("permission denied") || text.contains("(-13)") || text.contains("eacces")) {
            return "not allowed to listen on " + where + (port > 0 && port < 1024 ? " (ports below 1024 need "
                + "CAP_NET_BIND_SERVICE)" : "");
        }
        if (cause instanceof BindException) {
            return "cannot listen on " + where;
        }
        String reason = cause == null || cause.getMessage() == null ? "" : cause.getMessage();
        int colon = reason.lastIndexOf(": ");
        return "cannot listen on " + where + (reason.isEmpty() ? "" : ": " + reason.substring(colon + 1).trim());
    }

    /** {@code 127.0.0.1:4420}, {@code [::1]:4420}. */
    public static String hostPort(String address, int port) {
        return IpAddresses.hostPort(address, port);
    }
}
