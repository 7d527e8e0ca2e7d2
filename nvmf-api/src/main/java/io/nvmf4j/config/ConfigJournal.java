package io.nvmf4j.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.zip.CRC32;

/**
 * The configuration document kept as the document file plus a journal of the changes since it was written
 * ({@code <file>.journal}), so that a change costs what it changed, not the whole document.
 *
 * <p>The journal is a header line naming the document it follows (the SHA-256 of the document file's bytes), then one
 * line per change: a CRC-32 of the record in hex, a space, the record (JSON: {@code {"ops": [...]}}), a newline. An
 * operation puts an item of {@code bdevs}, {@code subsystems} or {@code pools} (replacing the item with its key, the
 * name or NQN, in place, else appending it), removes one by key, or sets the rest of the document (every field but
 * those three lists). {@link #save} appends the record of the difference from the document last saved and forces it to
 * the device before it returns, so a crash keeps every change it acknowledged. A record cut short by a crash (no
 * newline, a CRC that does not match) is the last one: {@link #replay} drops it and logs so; a damaged record with
 * others after it is an error. When the journal outgrows the document (or a change is not a few items, such as an
 * import), the document is compacted: written whole, atomically ({@link ConfigStore#writeAtomically}), then the
 * journal is replaced by a header naming it; a crash between the two leaves a journal whose header names another
 * document, whose changes the document already holds, and {@link #replay} ignores it (and logs so).
 *
 * <p>Items are compared by identity: the control layer shares the items a change did not touch with the document
 * before ({@link ConfigStore#shallowCopy}), so finding what changed costs a pointer comparison per item.
 */
public final class ConfigJournal {
    private static final Logger LOG = LoggerFactory.getLogger(ConfigJournal.class);
    private static final ObjectMapper MAPPER = ConfigStore.mapper().disable(SerializationFeature.INDENT_OUTPUT);
    private static final String MAGIC = "nvmf4j-config-journal 1 ";
    /** The most items of one list a change may touch and still be journaled (more: compacted). */
    private static final int MAX_ITEMS_PER_RECORD = 64;
    /** The journal is compacted once it holds more than this, or more than the document's own size. */
    private static final long MIN_COMPACTION_BYTES = 256 * 1024;

    private final Path file;
    private final Path journal;
    private TargetConfig last;
    private String lastRest;
    private long journalBytes;
    private long documentBytes;
    private long bytesWritten;
    private long compactions;

    private ConfigJournal(Path file) {
        this.file = file;
        this.journal = journalOf(file);
    }

    /** The journal of document file {@code file}: {@code <file>.journal} beside it. */
    public static Path journalOf(Path file) {
        return file.resolveSibling(file.getFileName() + ".journal");
    }

    /** One list of the document that the journal keeps item by item. */
    private record ListField<T>(String name, Class<T> type, Function<TargetConfig, List<T>> get,
                                Function<T, String> key) {
        @SuppressWarnings("unchecked")
        void set(TargetConfig c, List<?> items) {
            switch (name) {
                case "bdevs" -> c.bdevs = (List<BdevConfig>) items;
                case "subsystems" -> c.subsystems = (List<SubsystemConfig>) items;
                default -> c.pools = (List<PoolConfig>) items;
            }
        }
    }

    private static final List<ListField<?>> LISTS = List.of(
        new ListField<>("bdevs", BdevConfig.class, c -> c.bdevs, b -> b.name),
        new ListField<>("subsystems", SubsystemConfig.class, c -> c.subsystems, s -> s.nqn),
        new ListField<>("pools", PoolConfig.class, c -> c.pools, p -> p.name));

    /**
     * Starts journaling the changes of a target whose document is now {@code current} (the document file, with its
     * journal replayed, as the target started on it): when the file holds {@code current} and the journal no
     * change, both stay as they are; otherwise the document is compacted first.
     */
    public static ConfigJournal open(Path file, TargetConfig current) throws IOException {
        ConfigJournal j = new ConfigJournal(file);
        String json = ConfigStore.toJson(current);
        byte[] doc = json.getBytes(StandardCharsets.UTF_8);
        byte[] onDisk = Files.exists(file) ? Files.readAllBytes(file) : null;
        // the file as written (an operator's layout kept), when it holds the document
        boolean same = onDisk != null && (java.util.Arrays.equals(doc, onDisk)
            || json.equals(ConfigStore.toJson(ConfigStore.parse(new String(onDisk, StandardCharsets.UTF_8)))));
        String header = same ? MAGIC + sha256(onDisk) + "\n" : "";
        boolean clean = same && (!Files.exists(j.journal)
            || Files.readString(j.journal, StandardCharsets.UTF_8).equals(header));
        if (clean) {
            if (!Files.exists(j.journal)) {
                ConfigStore.writeAtomically(j.journal, header.getBytes(StandardCharsets.UTF_8));
            }
            j.documentBytes = onDisk.length;
            j.journalBytes = header.length();
            j.last = current;
            j.lastRest = rest(current);
        } else {
            j.compact(current, doc);
        }
        return j;
    }

    /** Saves {@code now} (the {@code Saver} of the control layer): its record appended and forced, or compacted. */
    public synchronized void save(Path target, TargetConfig now) throws IOException {
        if (!target.equals(file)) {
            throw new IllegalArgumentException("this journal keeps " + file + ", not " + target);
        }
        if (now == last) {
            return;
        }
        String rest = rest(now);
        ArrayNode ops = MAPPER.createArrayNode();
        boolean fits = true;
        for (ListField<?> f : LISTS) {
            fits = fits && diff(f, last, now, ops);
        }
        if (fits && !rest.equals(lastRest)) {
            ops.addObject().put("op", "document").set("value", MAPPER.readTree(rest));
        }
        if (!fits) {
            compact(now, ConfigStore.toJson(now).getBytes(StandardCharsets.UTF_8));
            return;
        }
        ObjectNode record = MAPPER.createObjectNode();
        record.set("ops", ops);
        byte[] line = line(MAPPER.writeValueAsString(record));
        if (journalBytes + line.length > Math.max(MIN_COMPACTION_BYTES, documentBytes)) {
            compact(now, ConfigStore.toJson(now).getBytes(StandardCharsets.UTF_8));
            return;
        }
        // opened per record: a journal that was removed or replaced fails the change instead of losing it
        try (FileChannel ch = FileChannel.open(journal, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            long at = ch.size();
            try {
                write(ch, line);
                ch.force(false);
            } catch (IOException e) {
                try {
                    ch.truncate(at); // a change that could not be saved leaves no record
                } catch (IOException ignored) {
                    // a torn record is dropped when the journal is read
                }
                throw e;
            }
        }
        journalBytes += line.length;
        bytesWritten += line.length;
        last = now;
        lastRest = rest;
    }

    /**
     * Adds to {@code ops} what turns list {@code f} of {@code before} into that of {@code after}, comparing items by
     * identity; false when that is not a few puts and removes (then the document is compacted instead).
     */
    private static <T> boolean diff(ListField<T> f, TargetConfig before, TargetConfig after, ArrayNode ops) {
        List<T> o = f.get().apply(before);
        List<T> n = f.get().apply(after);
        if (o == null || n == null) {
            return o == n;
        }
        int a = 0;
        while (a < o.size() && a < n.size() && o.get(a) == n.get(a)) {
            a++;
        }
        int bo = o.size();
        int bn = n.size();
        while (bo > a && bn > a && o.get(bo - 1) == n.get(bn - 1)) {
            bo--;
            bn--;
        }
        if (bo - a + bn - a > MAX_ITEMS_PER_RECORD) {
            return false;
        }
        List<String> newKeys = new ArrayList<>();
        for (T t : n.subList(a, bn)) {
            if (t == null || f.key().apply(t) == null) {
                return false;
            }
            newKeys.add(f.key().apply(t));
        }
        Set<String> wanted = new HashSet<>(newKeys);
        List<String> kept = new ArrayList<>();
        List<ObjectNode> removes = new ArrayList<>();
        for (T t : o.subList(a, bo)) {
            String k = t == null ? null : f.key().apply(t);
            if (k == null) {
                return false;
            }
            if (wanted.contains(k)) {
                kept.add(k);
            } else {
                removes.add(MAPPER.createObjectNode().put("op", "remove").put("list", f.name()).put("key", k));
            }
        }
        // replaying: a put of a kept key replaces it in place, any other put appends to the whole list
        List<String> replayed = new ArrayList<>(kept);
        for (String k : newKeys) {
            if (!kept.contains(k)) {
                if (bo != o.size()) {
                    return false;
                }
                replayed.add(k);
            }
        }
        if (!replayed.equals(newKeys)) {
            return false;
        }
        removes.forEach(ops::add);
        for (T t : n.subList(a, bn)) {
            ops.addObject().put("op", "put").put("list", f.name()).set("value", MAPPER.valueToTree(t));
        }
        return true;
    }

    /** The document without the journaled lists, as JSON. */
    private static String rest(TargetConfig c) {
        TargetConfig r = ConfigStore.shallowCopy(c);
        for (ListField<?> f : LISTS) {
            f.set(r, null);
        }
        try {
            return MAPPER.writeValueAsString(r);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Writes {@code now} whole (atomically) and starts an empty journal naming it. */
    private void compact(TargetConfig now, byte[] doc) throws IOException {
        ConfigStore.writeAtomically(file, doc);
        String header = MAGIC + sha256(doc) + "\n";
        ConfigStore.writeAtomically(journal, header.getBytes(StandardCharsets.UTF_8));
        documentBytes = doc.length;
        journalBytes = header.length();
        bytesWritten += doc.length + header.length();
        compactions++;
        last = now;
        lastRest = rest(now);
    }

    /** Bytes written to the document and the journal since this journal was opened (records and compactions). */
    public synchronized long bytesWritten() {
        return bytesWritten;
    }

    /** How many times the document was written whole since this journal was opened. */
    public synchronized long compactions() {
        return compactions;
    }

    // ------------------------------------------------------------------ reading

    /**
     * The document of {@code file} with the changes of its journal applied ({@link ConfigStore#load} reads through
     * this). No journal, or one that follows another document (a crash between the two writes of a compaction): the
     * document file alone.
     */
    static TargetConfig replay(Path file, byte[] docBytes, TargetConfig doc) throws IOException {
        Path journal = journalOf(file);
        if (!Files.exists(journal)) {
            return doc;
        }
        byte[] all = Files.readAllBytes(journal);
        String text = new String(all, StandardCharsets.UTF_8);
        int nl = text.indexOf('\n');
        if (nl < 0 || !text.startsWith(MAGIC)) {
            LOG.warn("{}: no journal header; reading {} alone", journal, file);
            return doc;
        }
        String names = text.substring(MAGIC.length(), nl);
        if (!names.equals(sha256(docBytes))) {
            LOG.warn("{} follows another document than {} (a crash while the document was compacted, or an edit of "
                + "the document): its changes are not replayed", journal, file);
            return doc;
        }
        List<String> records = new ArrayList<>();
        int start = nl + 1;
        int n = 0;
        while (start < text.length()) {
            n++;
            int end = text.indexOf('\n', start);
            String rec = end < 0 ? null : checked(text.substring(start, end));
            if (rec == null) {
                if (end < 0 || end == text.length() - 1) {
                    LOG.warn("{}: record {} is torn (cut short by a crash before it was acknowledged): dropped",
                        journal, n);
                    break;
                }
                throw new ConfigException(List.of(journal + ": record " + n + " is damaged and records follow it"));
            }
            records.add(rec);
            start = end + 1;
        }
        return apply(doc, records, journal);
    }

    /** The record of a journal line, or null when its CRC does not match. */
    private static String checked(String line) {
        int sp = line.indexOf(' ');
        if (sp != 8) {
            return null;
        }
        String rec = line.substring(sp + 1);
        return line.substring(0, sp).equals(crc(rec)) ? rec : null;
    }

    private static TargetConfig apply(TargetConfig doc, List<String> records, Path journal) throws IOException {
        if (records.isEmpty()) {
            return doc;
        }
        Map<String, LinkedHashMap<String, Object>> lists = new LinkedHashMap<>();
        for (ListField<?> f : LISTS) {
            LinkedHashMap<String, Object> m = new LinkedHashMap<>();
            List<?> items = f.get().apply(doc);
            for (Object t : items == null ? List.of() : items) {
                m.put(key(f, t), t);
            }
            lists.put(f.name(), m);
        }
        TargetConfig out = doc;
        for (String rec : records) {
            for (JsonNode op : MAPPER.readTree(rec).path("ops")) {
                String kind = op.path("op").asText();
                if ("document".equals(kind)) {
                    out = ConfigStore.parse(MAPPER.writeValueAsString(op.get("value")));
                    continue;
                }
                ListField<?> f = LISTS.stream().filter(x -> x.name().equals(op.path("list").asText())).findFirst()
                    .orElseThrow(() -> new ConfigException(List.of(journal + ": unknown list in " + op)));
                LinkedHashMap<String, Object> m = lists.get(f.name());
                if ("remove".equals(kind)) {
                    m.remove(op.path("key").asText());
                } else if ("put".equals(kind)) {
                    Object t = MAPPER.treeToValue(op.get("value"), f.type());
                    m.put(key(f, t), t);
                } else {
                    throw new ConfigException(List.of(journal + ": unknown operation in " + op));
                }
            }
        }
        for (ListField<?> f : LISTS) {
            f.set(out, new ArrayList<>(lists.get(f.name()).values()));
        }
        LOG.info("{}: {} change(s) replayed onto the document", journal, records.size());
        return out;
    }

    @SuppressWarnings("unchecked")
    private static <T> String key(ListField<T> f, Object t) {
        return f.key().apply((T) t);
    }

    // ------------------------------------------------------------------ bytes

    private static byte[] line(String record) {
        return (crc(record) + " " + record + "\n").getBytes(StandardCharsets.UTF_8);
    }

    private static String crc(String record) {
        CRC32 c = new CRC32();
        c.update(record.getBytes(StandardCharsets.UTF_8));
        return String.format("%08x", c.getValue());
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void write(FileChannel ch, byte[] bytes) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }
}
