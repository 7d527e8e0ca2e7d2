package io.nvmf4j.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Converts the document {@code nvmetcli save} writes (the Linux kernel target's configfs tree as JSON:
 * {@code hosts}, {@code ports}, {@code subsystems}) into an nvmf4j configuration document.
 *
 * <ul>
 *   <li>Each enabled namespace becomes a {@code file} bdev on its {@code device.path} (named after the
 *       subsystem NQN's last component and the nsid, e.g. {@code disk1-ns1}; numBlocks 0 = the file's
 *       size; the block size given) and a namespace with the same nsid, NGUID and UUID (all-zero ones
 *       are treated as unset, so nvmf4j generates them).</li>
 *   <li>{@code attr}: allow_any_host, serial, model, cntlid_min/cntlid_max are kept;
 *       {@code allowed_hosts} become the subsystem's hosts.</li>
 *   <li>A tcp port's {@code addr.tsas tls1.3} becomes its listeners' secureChannel ({@code required}, or
 *       {@code optional} with {@code addr.treq not required}); the TLS PSKs are in the kernel's keyring, not in
 *       the file (a warning says so).</li>
 *   <li>Each tcp or rdma port becomes a listener of every subsystem linked to it (rdma is kept even
 *       though this build's target accepts only tcp listeners); a port's referrals become discovery
 *       referrals (nvmf4j has one discovery log for all listeners).</li>
 * </ul>
 *
 * Everything else is reported as a warning, never dropped silently, except values that only restate a
 * kernel default: enable=1, ana_grpid=1, the default ANA group 1 "optimized", resv.enable=0,
 * pi_enable=0, treq "not specified", tsas "none", a referral's name and addr.portid, and
 * device.buffered_io (nvmf4j's file bdevs use the page cache and honour Flush; set {@code directIo} by
 * hand for O_DIRECT).
 */
final class NvmetcliConverter {
    private static final Pattern HEX32 = Pattern.compile("[0-9a-fA-F]{32}");
    private static final Pattern HEX16 = Pattern.compile("[0-9a-fA-F]{16}");
    private static final Pattern ZEROS = Pattern.compile("[0-]*");
    private static final int MAX_NAMESPACES = 1024;

    /** The converted document and what could not be carried over. */
    record Result(TargetConfig config, List<String> warnings) {
    }

    private final int blockSize;
    /** Where hosts' DH-HMAC-CHAP keys are written (absolute), or null: not imported. */
    private final Path keyDir;
    private final TargetConfig out = new TargetConfig();
    private final List<String> warnings = new ArrayList<>();
    private final Map<String, SubsystemConfig> subsystems = new LinkedHashMap<>();
    private final Set<String> bdevNames = new HashSet<>();
    private final Set<String> allowedHosts = new HashSet<>();

    private NvmetcliConverter(int blockSize, Path keyDir) {
        this.blockSize = blockSize;
        this.keyDir = keyDir == null ? null : keyDir.toAbsolutePath().normalize();
    }

    /**
     * @param root      the parsed nvmetcli {@code config.json}
     * @param blockSize the block size of every file bdev (512 or 4096)
     */
    static Result convert(JsonNode root, int blockSize) {
        return convert(root, blockSize, null);
    }

    /**
     * @param keyDir where each host's DH-HMAC-CHAP keys (inline in nvmetcli's file) are written, one file of mode 0600
     *               per key, for the subsystems that allow the host to name; null: not imported (a warning)
     */
    static Result convert(JsonNode root, int blockSize, Path keyDir) {
        if (root == null || !root.isObject()) {
            throw CliException.usage("not an nvmetcli configuration: expected a JSON object with hosts, ports "
                + "and subsystems");
        }
        NvmetcliConverter c = new NvmetcliConverter(blockSize, keyDir);
        root.fieldNames().forEachRemaining(k -> {
            if (!Set.of("hosts", "ports", "subsystems").contains(k)) {
                c.warn(k + ": not an nvmetcli section, ignored");
            }
        });
        JsonNode subs = root.path("subsystems");
        for (int i = 0; i < subs.size(); i++) {
            c.subsystem(subs.get(i), "subsystems[" + i + "]");
        }
        JsonNode ports = root.path("ports");
        for (int i = 0; i < ports.size(); i++) {
            c.port(ports.get(i), "ports[" + i + "]");
        }
        JsonNode hosts = root.path("hosts");
        for (int i = 0; i < hosts.size(); i++) {
            c.host(hosts.get(i), "hosts[" + i + "]");
        }
        c.out.subsystems.addAll(c.subsystems.values());
        return new Result(c.out, List.copyOf(c.warnings));
    }

    // ------------------------------------------------------------------ subsystems and namespaces

    private void subsystem(JsonNode s, String slot) {
        String nqn = s.path("nqn").asText(null);
        if (nqn == null) {
            warn(slot + ": no nqn, skipped");
            return;
        }
        String at = slot + " " + nqn;
        if (subsystems.containsKey(nqn)) {
            warn(at + ": duplicate subsystem, skipped");
            return;
        }
        SubsystemConfig sub = new SubsystemConfig();
        sub.nqn = nqn;
        subsystems.put(nqn, sub);
        attributes(sub, s.path("attr"), at);
        for (JsonNode h : s.path("allowed_hosts")) {
            if (!sub.hosts.contains(h.asText())) {
                sub.hosts.add(h.asText());
            }
            allowedHosts.add(h.asText());
        }
        if (s.path("passthru").size() > 0) {
            warn(at + ": passthru (a whole NVMe controller exported as is) is not supported, not imported");
        }
        JsonNode ns = s.path("namespaces");
        for (int k = 0; k < ns.size(); k++) {
            namespace(sub, ns.get(k), at + " namespaces[" + k + "]");
        }
        unknown(s, at, "nqn", "attr", "allowed_hosts", "namespaces", "passthru");
    }

    private void attributes(SubsystemConfig sub, JsonNode attr, String at) {
        attr.fields().forEachRemaining(e -> {
            String v = e.getValue().asText();
            switch (e.getKey()) {
                case "allow_any_host" -> sub.allowAnyHost = isTrue(v);
                case "serial" -> {
                    if (!v.isEmpty() && v.length() <= 20 && printable(v)) {
                        sub.serial = v;
                    } else {
                        warn(at + ": attr.serial '" + v + "' is not 1..20 printable ASCII characters; a new serial "
                            + "will be generated");
                    }
                }
                case "model" -> {
                    if (!v.isEmpty() && v.length() <= 40 && printable(v)) {
                        sub.model = v;
                    } else {
                        warn(at + ": attr.model '" + v + "' is not 1..40 printable ASCII characters, not imported");
                    }
                }
                case "cntlid_min" -> sub.minCntlid = intOr(v, sub.minCntlid, at + ": attr.cntlid_min");
                case "cntlid_max" -> sub.maxCntlid = intOr(v, sub.maxCntlid, at + ": attr.cntlid_max");
                case "pi_enable" -> quietIf(v.equals("0"), at + ": attr.pi_enable=" + v
                    + ": protection information is not supported, not imported");
                case "version" -> warn(at + ": attr.version=" + v + " not imported: nvmf4j reports its own "
                    + "NVMe version");
                default -> warn(at + ": attr." + e.getKey() + "=" + v + " is not supported, not imported");
            }
        });
    }

    private void namespace(SubsystemConfig sub, JsonNode n, String slot) {
        if (!n.path("nsid").canConvertToInt() || n.path("nsid").asInt() < 1) {
            warn(slot + ": no valid nsid, skipped");
            return;
        }
        int nsid = n.path("nsid").asInt();
        String at = slot + " (nsid " + nsid + ")";
        if (n.has("enable") && !isTrue(n.get("enable").asText())) {
            warn(at + ": disabled in nvmetcli (enable=0), not imported");
            return;
        }
        if (nsid > MAX_NAMESPACES) {
            warn(at + ": nsid above " + MAX_NAMESPACES + " is not supported, skipped");
            return;
        }
        JsonNode device = n.path("device");
        String path = device.path("path").asText("");
        if (path.isEmpty()) {
            warn(at + ": no device.path, skipped");
            return;
        }
        if (sub.namespaces.stream().anyMatch(x -> x.nsid == nsid)) {
            warn(at + ": duplicate nsid, skipped");
            return;
        }
        if (!Files.exists(Path.of(path))) {
            warn(at + ": device path " + path + " does not exist here; the target refuses the bdev until it does");
        }
        BdevConfig b = new BdevConfig(bdevName(sub.nqn, nsid), "file", blockSize, 0);
        b.path = path;
        out.bdevs.add(b);
        NamespaceConfig ns = new NamespaceConfig(nsid, b.name);
        ns.nguid = identifier(device, "nguid", HEX32, at);
        ns.eui64 = identifier(device, "eui64", HEX16, at);
        String uuid = device.path("uuid").asText("");
        if (!uuid.isEmpty() && !ZEROS.matcher(uuid).matches()) {
            try {
                ns.uuid = UUID.fromString(uuid).toString();
            } catch (IllegalArgumentException e) {
                warn(at + ": device.uuid '" + uuid + "' is not a UUID; a new one will be generated");
            }
        }
        sub.namespaces.add(ns);
        sub.maxNamespaces = Math.max(sub.maxNamespaces, nsid);
        device.fieldNames().forEachRemaining(k -> {
            if (!Set.of("path", "nguid", "uuid", "eui64", "buffered_io").contains(k)) {
                warn(at + ": device." + k + "=" + device.get(k).asText() + " is not supported, not imported");
            }
        });
        String grpid = n.has("ana_grpid") ? n.get("ana_grpid").asText() : n.path("ana").path("grpid").asText("1");
        quietIf(grpid.equals("1"), at + ": ANA group " + grpid + " is not supported (ANA), not imported");
        n.path("ana").fieldNames().forEachRemaining(k -> quietIf(k.equals("grpid"),
            at + ": ana." + k + " is not supported, not imported"));
        n.path("resv").fields().forEachRemaining(e -> quietIf(e.getKey().equals("enable")
            && e.getValue().asText().equals("0"), at + ": resv." + e.getKey() + "=" + e.getValue().asText()
            + ": reservations are not supported, not imported"));
        unknown(n, at, "nsid", "enable", "device", "ana_grpid", "ana", "resv");
    }

    /** A hex identifier (NGUID, EUI-64) without dashes; absent when unset, all zeros or malformed. */
    private String identifier(JsonNode device, String field, Pattern form, String at) {
        String raw = device.path(field).asText("");
        if (raw.isEmpty() || ZEROS.matcher(raw).matches()) {
            return null;
        }
        String hex = raw.replace("-", "").toLowerCase(Locale.ROOT);
        if (!form.matcher(hex).matches()) {
            warn(at + ": device." + field + " '" + raw + "' is malformed; a new one will be generated");
            return null;
        }
        return hex;
    }

    /** "&lt;last component of the NQN&gt;-ns&lt;nsid&gt;", made unique; only [A-Za-z0-9._-]. */
    private String bdevName(String nqn, int nsid) {
        String tail = nqn.substring(nqn.lastIndexOf(':') + 1);
        if (tail.isEmpty()) {
            tail = nqn;
        }
        String base = tail.replaceAll("[^A-Za-z0-9._-]", "_") + "-ns" + nsid;
        String name = base;
        for (int i = 2; !bdevNames.add(name); i++) {
            name = base + "-" + i;
        }
        return name;
    }

    // ------------------------------------------------------------------ ports, referrals, hosts

    private void port(JsonNode p, String slot) {
        String at = slot + " (portid " + p.path("portid").asText("?") + ")";
        ListenerConfig l = address(p.path("addr"), at, true);
        for (JsonNode a : p.path("ana_groups")) {
            boolean isDefault = a.path("grpid").asInt() == 1
                && a.path("ana").path("state").asText("optimized").equals("optimized");
            quietIf(isDefault, at + ": ANA group " + a.path("grpid").asText() + " ("
                + a.path("ana").path("state").asText() + ") is not supported (ANA), not imported");
        }
        p.path("param").fields().forEachRemaining(e -> {
            String v = e.getValue().asText();
            switch (e.getKey()) {
                case "inline_data_size" -> warn(at + ": param.inline_data_size=" + v + " not imported: nvmf4j has "
                    + "one in-capsule data size for all TCP listeners (nvmfctl transport set tcp "
                    + "--in-capsule-data-size)");
                case "pi_enable" -> quietIf(v.equals("0"), at + ": param.pi_enable=" + v
                    + ": protection information is not supported, not imported");
                default -> warn(at + ": param." + e.getKey() + "=" + v + " is not supported, not imported");
            }
        });
        JsonNode linked = p.path("subsystems");
        if (l != null) {
            if (linked.isEmpty()) {
                warn(at + ": exports no subsystem; nvmf4j's discovery service listens only on subsystem "
                    + "listeners, not imported");
            }
            for (JsonNode nqn : linked) {
                SubsystemConfig s = subsystems.get(nqn.asText());
                if (s == null) {
                    warn(at + ": links subsystem " + nqn.asText() + ", which is not in the file; skipped");
                } else if (!s.listeners.contains(l)) {
                    ListenerConfig copy = new ListenerConfig(l.transport, l.address, l.port);
                    copy.secureChannel = l.secureChannel;
                    s.listeners.add(copy);
                }
            }
        }
        JsonNode referrals = p.path("referrals");
        for (int i = 0; i < referrals.size(); i++) {
            referral(referrals.get(i), at + " referrals[" + i + "]");
        }
        unknown(p, at, "portid", "addr", "param", "ana_groups", "subsystems", "referrals");
    }

    private void referral(JsonNode r, String slot) {
        String at = r.has("name") ? slot + " " + r.get("name").asText() : slot;
        if (r.has("enable") && !isTrue(r.get("enable").asText())) {
            warn(at + ": disabled in nvmetcli (enable=0), not imported");
            return;
        }
        ListenerConfig a = address(r.path("addr"), at, false);
        if (a != null) {
            ReferralConfig ref = new ReferralConfig(a.transport, a.address, a.port);
            if (!out.referrals.contains(ref)) {
                out.referrals.add(ref);
            }
        }
        unknown(r, at, "name", "enable", "addr");
    }

    /** A port's or referral's addr as a transport address, or null (with a warning) when nvmf4j cannot use it. */
    private ListenerConfig address(JsonNode addr, String at, boolean isPort) {
        String trtype = addr.path("trtype").asText("");
        String adrfam = addr.path("adrfam").asText("");
        String traddr = addr.path("traddr").asText("").replace("[", "").replace("]", "");
        String trsvcid = addr.path("trsvcid").asText("");
        String what = trtype + " " + traddr + ":" + trsvcid;
        if (!trtype.equals("tcp") && !trtype.equals("rdma")) {
            warn(at + ": transport '" + trtype + "' is not supported (tcp and rdma are), " + what + " not imported");
            return null;
        }
        if (!adrfam.equals("ipv4") && !adrfam.equals("ipv6")) {
            warn(at + ": address family '" + adrfam + "' is not supported (ipv4 and ipv6 are), " + what
                + " not imported");
            return null;
        }
        int port;
        try {
            port = Integer.parseInt(trsvcid);
        } catch (NumberFormatException e) {
            warn(at + ": trsvcid '" + trsvcid + "' is not a port number, " + what + " not imported");
            return null;
        }
        addr.fields().forEachRemaining(e -> {
            String k = e.getKey();
            String v = e.getValue().asText();
            switch (k) {
                case "trtype", "adrfam", "traddr", "trsvcid", "treq", "tsas" -> { }
                case "portid" -> quietIf(!isPort, at + ": addr.portid=" + v + " is not supported, not imported");
                default -> warn(at + ": addr." + k + "=" + v + " is not supported, not imported");
            }
        });
        ListenerConfig l = new ListenerConfig(trtype, traddr, port);
        l.secureChannel = secureChannel(addr, trtype, at, isPort);
        return l;
    }

    /**
     * A port's secure channel from nvmet's {@code addr_tsas} and {@code addr_treq}: TSAS {@code tls1.3} on a tcp port
     * is TLS, required unless TREQ says {@code not required} (nvmet makes TREQ required when TLS is set and it was not
     * specified); null (none) otherwise. TLS PSKs live in the kernel's keyring, not in nvmetcli's file, so the
     * warning says how to give the hosts theirs. Anything else (TLS on rdma or on a referral, TREQ without TLS) is a
     * warning.
     */
    private String secureChannel(JsonNode addr, String trtype, String at, boolean isPort) {
        String treq = addr.path("treq").asText("not specified");
        String tsas = addr.path("tsas").asText("none");
        boolean tls = tsas.equals("tls1.3");
        if (!tls) {
            quietIf(tsas.equals("none") || tsas.isEmpty(), at + ": addr.tsas=" + tsas + " is not supported, not "
                + "imported");
            quietIf(treq.equals("not specified"), at + ": addr.treq=" + treq + " without addr.tsas tls1.3: a "
                + "secure channel other than TLS is not supported, not imported");
            return null;
        }
        if (!isPort || !trtype.equals("tcp")) {
            warn(at + ": addr.tsas=tls1.3: TLS " + (isPort ? "on " + trtype + " ports" : "on a referral")
                + " is not supported, not imported");
            return null;
        }
        String channel = treq.equals("not required") ? ListenerConfig.SECURE_OPTIONAL : ListenerConfig.SECURE_REQUIRED;
        warn(at + ": addr.tsas=tls1.3 (addr.treq " + treq + ") imported as secureChannel " + channel + "; the "
            + "hosts' TLS PSKs are in the kernel keyring, not in nvmetcli's file: give each host its PSK with nvmfctl "
            + "host add -n NQN -q HOSTNQN --tls-key FILE (the key nvme gen-tls-key printed), and -n "
            + io.nvmf4j.config.Nqn.DISCOVERY + " for nvme discover --tls");
        return channel;
    }

    private void host(JsonNode h, String slot) {
        String nqn = h.path("nqn").asText("");
        String at = slot + " " + nqn;
        h.fields().forEachRemaining(e -> {
            if (e.getKey().equals("nqn")) {
                return;
            }
            if (e.getKey().equals("dhchap") && e.getValue().isObject()) {
                dhchap(nqn, e.getValue(), at);
            } else {
                warn(at + ": " + e.getKey() + " is not supported, not imported");
            }
        });
        if (!nqn.isEmpty() && !allowedHosts.contains(nqn)) {
            warn(at + ": not allowed on any subsystem (nvmf4j keeps hosts per subsystem), not imported");
        }
    }

    /**
     * A host's DH-HMAC-CHAP settings (nvmet's {@code dhchap_key}, {@code dhchap_ctrl_key}, {@code dhchap_hash},
     * {@code dhchap_dhgroup}): with {@code --key-dir} the keys are written there and every subsystem that allows the
     * host gets a hostKeys entry naming them (nvmet authenticates a host on the subsystems it is linked to); the
     * hash and DH group restrictions are not nvmf4j's (it takes what the host offers) and are warnings unless
     * nvmet's defaults.
     */
    private void dhchap(String nqn, JsonNode d, String at) {
        String key = d.path("key").asText("");
        String ctrlKey = d.path("ctrl_key").asText("");
        String hash = d.path("hash").asText("");
        String dhgroup = d.path("dhgroup").asText("");
        quietIf(hash.isEmpty() || hash.equals("hmac(sha256)"), at + ": dhchap.hash=" + hash + ": per-host hash "
            + "restrictions are not supported (nvmf4j takes the host's choice), not imported");
        quietIf(dhgroup.isEmpty() || dhgroup.equals("null"), at + ": dhchap.dhgroup=" + dhgroup + ": per-host DH "
            + "group restrictions are not supported (nvmf4j takes the host's choice), not imported");
        unknown(d, at + " dhchap", "key", "ctrl_key", "hash", "dhgroup");
        if (key.isEmpty()) {
            quietIf(ctrlKey.isEmpty(), at + ": dhchap.ctrl_key without dhchap.key (the controller authenticates to a "
                + "host that authenticated), not imported");
            return;
        }
        if (keyDir == null) {
            warn(at + ": DH-HMAC-CHAP keys are imported only with --key-dir DIR (nvmf4j reads keys from files of mode "
                + "0600); the host is allowed without authentication");
            return;
        }
        String keyFile;
        String ctrlKeyFile = null;
        try {
            io.nvmf4j.auth.DhchapKey.parse(key);
            if (!ctrlKey.isEmpty()) {
                io.nvmf4j.auth.DhchapKey.parse(ctrlKey);
            }
            String base = nqn.replaceAll("[^A-Za-z0-9._-]", "_");
            keyFile = writeKey(base + ".key", key);
            if (!ctrlKey.isEmpty()) {
                ctrlKeyFile = writeKey(base + ".ctrl-key", ctrlKey);
            }
        } catch (IllegalArgumentException | java.io.IOException e) {
            warn(at + ": DH-HMAC-CHAP keys not imported (" + e.getMessage() + "); the host is allowed without "
                + "authentication");
            return;
        }
        for (SubsystemConfig s : subsystems.values()) {
            if (s.hosts.contains(nqn)) {
                s.hostKeys.add(new io.nvmf4j.config.HostKeyConfig(nqn, keyFile, ctrlKeyFile));
            }
        }
    }

    /**
     * Writes {@code text} to {@code name} in the key directory, mode 0600 (the directory made 0700 if absent); a file
     * there already is kept when it holds the same key and refused otherwise (an import never overwrites a key).
     */
    private String writeKey(String name, String text) throws java.io.IOException {
        var owner = java.nio.file.attribute.PosixFilePermissions.fromString("rw-------");
        if (!Files.isDirectory(keyDir)) {
            Files.createDirectories(keyDir, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
        }
        Path f = keyDir.resolve(name);
        if (Files.exists(f, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            if (!Files.isRegularFile(f, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                || !Files.readString(f).strip().equals(text.strip())) {
                throw new java.io.IOException(f + " exists and holds another key; not overwritten");
            }
            return f.toString();
        }
        Files.createFile(f, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(owner));
        Files.writeString(f, text.strip() + "\n");
        return f.toString();
    }

    // ------------------------------------------------------------------ helpers

    private void unknown(JsonNode node, String at, String... known) {
        Set<String> k = Set.of(known);
        node.fieldNames().forEachRemaining(f -> {
            if (!k.contains(f)) {
                warn(at + ": " + f + " is not supported, not imported");
            }
        });
    }

    /** A warning unless {@code isDefault}: the value restates a kernel default and carries nothing. */
    private void quietIf(boolean isDefault, String warning) {
        if (!isDefault) {
            warn(warning);
        }
    }

    private int intOr(String v, int fallback, String what) {
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            warn(what + "=" + v + " is not a number, not imported");
            return fallback;
        }
    }

    private void warn(String message) {
        warnings.add(message);
    }

    private static boolean isTrue(String v) {
        return v.equals("1") || v.equalsIgnoreCase("true") || v.equalsIgnoreCase("y") || v.equalsIgnoreCase("yes");
    }

    private static boolean printable(String s) {
        return s.chars().allMatch(ch -> ch >= 0x20 && ch < 0x7F);
    }
}
