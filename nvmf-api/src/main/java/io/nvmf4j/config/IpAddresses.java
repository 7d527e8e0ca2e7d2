package io.nvmf4j.config;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.regex.Pattern;

/**
 * IP literals in one canonical form, so that two spellings of one address compare equal: IPv4 as a dotted quad
 * without leading zeros ({@code 127.000.000.001} is refused, since inet_aton would read {@code 010} as octal),
 * IPv6 as RFC 5952 writes it (lower case, no leading zeros, the longest run of zero groups as {@code ::}), so
 * {@code 0:0:0:0:0:0:0:1} is stored as {@code ::1}. IPv4-mapped IPv6 ({@code ::ffff:a.b.c.d}) is refused: the
 * IPv4 form names the same address. Never a host name, never a DNS lookup.
 */
public final class IpAddresses {
    private static final Pattern IPV4 =
        Pattern.compile("((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])");
    private static final Pattern IPV4_LOOSE = Pattern.compile("[0-9]{1,3}(\\.[0-9]{1,3}){3}");
    private static final Pattern IPV6_CHARS = Pattern.compile("[0-9a-fA-F:.]*:[0-9a-fA-F:.]*");

    private IpAddresses() {
    }

    /** The canonical form of an IP literal; null when {@code address} is not one (see {@link #problem}). */
    public static String canonical(String address) {
        if (address == null) {
            return null;
        }
        if (IPV4.matcher(address).matches()) {
            return address;
        }
        if (!IPV6_CHARS.matcher(address).matches()) {
            return null;
        }
        try {
            InetAddress a = InetAddress.getByName(address);
            return a instanceof Inet6Address v6 ? format(v6.getAddress()) : null;
        } catch (UnknownHostException e) {
            return null;
        }
    }

    /** {@code address} in canonical form when it is an IP literal, otherwise unchanged (the validator reports it). */
    public static String canonicalOrSame(String address) {
        String c = canonical(address);
        return c == null ? address : c;
    }

    /** Null when {@code address} is an IP literal, else why not (a phrase to follow "field: "). */
    public static String problem(String address) {
        if (address == null) {
            return "missing (an IPv4 or IPv6 literal)";
        }
        if (canonical(address) != null) {
            return null;
        }
        if (IPV4_LOOSE.matcher(address).matches()) {
            return "must be an IPv4 literal without leading zeros (each part 0..255), got '" + address + "'";
        }
        if (IPV6_CHARS.matcher(address).matches()) {
            try {
                if (InetAddress.getByName(address) instanceof Inet4Address v4) {
                    return "write the IPv4-mapped address '" + address + "' as " + v4.getHostAddress();
                }
            } catch (UnknownHostException e) {
                // not an address at all: the general message below
            }
        }
        return "must be an IPv4 or IPv6 literal (no host names), got '" + address + "'";
    }

    /** {@code 127.0.0.1:4420}, {@code [::1]:4420} (RFC 5952 section 6). */
    public static String hostPort(String address, int port) {
        return (address != null && address.indexOf(':') >= 0 ? "[" + address + "]" : address) + ":" + port;
    }

    /** RFC 5952 text of a 16-byte IPv6 address. */
    static String format(byte[] a) {
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) {
            g[i] = ((a[2 * i] & 0xFF) << 8) | (a[2 * i + 1] & 0xFF);
        }
        int bestStart = -1;
        int bestLen = 1;  // a single zero group is not shortened (RFC 5952 4.2.2)
        for (int i = 0; i < 8; ) {
            if (g[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && g[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestStart = i;
                bestLen = j - i;
            }
            i = j;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
                sb.append(':');
            }
            sb.append(Integer.toHexString(g[i]));
        }
        return sb.toString();
    }
}
