package io.nvmf4j.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.type.LogicalType;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * Reads and writes the configuration document. Writes are atomic: a temporary file in the same
 * directory, fsync, rename over the old file, fsync the directory; a crash leaves the old or the new
 * document, never a torn one.
 */
public final class ConfigStore {
    public static final String DEFAULT_NQN = "nqn.2026-11.io.nvmf4j:default";
    private static final ObjectMapper MAPPER = strictMapper();
    private static final SecureRandom RANDOM = new SecureRandom();

    private ConfigStore() {
    }

    /**
     * The embedded default: one subsystem that admits any host, one 256 MiB malloc namespace, NVMe/TCP
     * (and discovery) on 127.0.0.1:4420.
     */
    public static TargetConfig defaultConfig() {
        TargetConfig c = new TargetConfig();
        c.bdevs.add(new BdevConfig("malloc0", "malloc", 512, 256L * 1024 * 1024 / 512));
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = DEFAULT_NQN;
        s.allowAnyHost = true;
        s.namespaces.add(new NamespaceConfig(1, "malloc0"));
        s.listeners.add(new ListenerConfig("tcp", "127.0.0.1", 4420));
        c.subsystems.add(s);
        return c;
    }

    /**
     * The mapper of the config file and of every REST body: nothing is guessed. Unknown fields, duplicate keys,
     * nulls for numbers and booleans, trailing tokens, floats for integers and every scalar coercion
     * ({@code "4420"} for a number, {@code 1} for a boolean, {@code 5} for a string, {@code ""} for an object)
     * are errors that {@link JsonProblems} turns into a message naming the field.
     */
    private static ObjectMapper strictMapper() {
        JsonMapper m = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .enable(SerializationFeature.INDENT_OUTPUT)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.FAIL_ON_NUMBERS_FOR_ENUMS)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .build();
        for (LogicalType t : LogicalType.values()) {
            m.coercionConfigFor(t).setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail);
        }
        m.coercionConfigFor(LogicalType.Textual).setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
            .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
            .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
        m.coercionConfigFor(LogicalType.Boolean).setCoercion(CoercionInputShape.Integer, CoercionAction.Fail);
        m.coercionConfigFor(LogicalType.Integer).setCoercion(CoercionInputShape.Float, CoercionAction.Fail);
        return m;
    }

    /** A copy of the strict mapper (see {@link #strictMapper}), for reading and writing fragments. */
    public static ObjectMapper mapper() {
        return MAPPER.copy();
    }

    public static TargetConfig parse(String json) {
        try {
            TargetConfig c = MAPPER.readValue(json, TargetConfig.class);
            if (c == null) {
                throw new ConfigException(List.of("the document is empty"));
            }
            return c;
        } catch (JsonProcessingException e) {
            JsonProblems.Problem problem = JsonProblems.of(e, "document");
            throw new ConfigException(problem.message() + problem.where(), e);
        }
    }

    public static String toJson(TargetConfig c) {
        try {
            return MAPPER.writeValueAsString(c) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The document of {@code file} with the changes of its journal ({@link ConfigJournal}, {@code <file>.journal})
     * applied, when it has one; a document without a journal reads as it always did.
     */
    public static TargetConfig load(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        return ConfigJournal.replay(file, bytes, parse(new String(bytes, StandardCharsets.UTF_8)));
    }

    /**
     * A copy of {@code c} that shares every item with it but has lists of its own (every list field): items may be
     * added to, removed from or replaced in the copy's lists without touching {@code c}; an item to be changed in
     * place must be replaced by a copy first. Costs one pointer per item, not a walk of the document.
     */
    public static TargetConfig shallowCopy(TargetConfig c) {
        TargetConfig out = new TargetConfig();
        try {
            for (Field f : TargetConfig.class.getFields()) {
                if (Modifier.isStatic(f.getModifiers()) || Modifier.isFinal(f.getModifiers())) {
                    continue;
                }
                Object v = f.get(c);
                f.set(out, v instanceof List<?> l ? new ArrayList<>(l) : v);
            }
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    /** Writes the document atomically and durably. */
    public static void save(Path file, TargetConfig c) throws IOException {
        writeAtomically(file, toJson(c).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Replaces {@code file} with {@code bytes} atomically and durably (temporary file beside it, fsync, rename,
     * fsync of the directory); a new file gets mode 0600, an existing one keeps its permissions. The other state
     * files of the service (reservations) are written the same way.
     */
    public static void writeAtomically(Path file, byte[] bytes) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = dir.resolve("." + file.getFileName() + ".tmp");
        Files.deleteIfExists(tmp);
        // the document may hold the API token: the new file keeps the old one's permissions, else 0600
        Set<PosixFilePermission> perms = PosixFilePermissions.fromString("rw-------");
        try {
            if (Files.exists(file)) {
                perms = Files.getPosixFilePermissions(file);
            }
        } catch (UnsupportedOperationException e) {
            perms = null;
        }
        if (perms != null) {
            try {
                Files.createFile(tmp, PosixFilePermissions.asFileAttribute(perms));
            } catch (UnsupportedOperationException e) {
                // not a POSIX filesystem: default permissions
            }
        }
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(bytes);
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.force(true);
        }
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException ignored) {
            // some filesystems cannot fsync a directory; the rename itself is still atomic
        }
    }

    /**
     * Gives every subsystem a serial and every namespace an NGUID and a UUID where none is set, so that
     * identities are generated once and then kept in the file. Returns whether anything changed.
     */
    public static boolean assignIdentities(TargetConfig c) {
        boolean changed = false;
        // null entries and lists are left for ConfigValidator to report (REST body fuzz: "namespaces": [null])
        for (SubsystemConfig s : c.subsystems == null ? List.<SubsystemConfig>of() : c.subsystems) {
            if (s != null) {
                changed |= assignIdentities(s);
            }
        }
        return changed;
    }

    /** As {@link #assignIdentities(TargetConfig)}, for one subsystem and its namespaces. */
    public static boolean assignIdentities(SubsystemConfig s) {
        boolean changed = false;
        if (s.serial == null) {
            s.serial = HexFormat.of().formatHex(randomBytes(10));
            changed = true;
        }
        for (NamespaceConfig n : s.namespaces == null ? List.<NamespaceConfig>of() : s.namespaces) {
            if (n == null) {
                continue;
            }
            if (n.nguid == null) {
                n.nguid = HexFormat.of().formatHex(randomBytes(16));
                changed = true;
            }
            if (n.uuid == null) {
                n.uuid = UUID.randomUUID().toString();
                changed = true;
            }
        }
        return changed;
    }

    private static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }
}
