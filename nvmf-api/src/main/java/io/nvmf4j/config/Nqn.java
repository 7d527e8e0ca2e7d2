package io.nvmf4j.config;


import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.CharBuffer;
import java.util.regex.Pattern;

/**
 * The NVMe Qualified Name rules (NVMe Base Specification, "NVM Qualified Names"): at most 223 bytes of UTF-8,
 * and either {@code nqn.2014-08.org.nvmexpress:uuid:<uuid>} or {@code nqn.yyyy-mm.<reverse domain>:<string>}
 * with a real month and a domain whose labels follow RFC 1034 (a letter first, then letters, digits and
 * hyphens, a letter or digit last, 1..63 characters). The same facts SPDK's {@code nvmf_nqn_is_valid} checks.
 *
 * <p>Legacy names ({@code allowLegacyNqns}): Linux nvmet takes any configfs directory name, and tests such
 * as blktests name subsystems {@code blktests-subsystem-1}. With the opt-in, a name that is not a valid NQN
 * is still accepted when it is 1..223 bytes of UTF-8 without control characters, spaces or {@code /}.
 *
 * <p>Neither kind may hold a C0 (U+0000..U+001F), DEL or C1 (U+0080..U+009F) character: Connect refuses them as
 * well, so a name that reaches a log or a tab-separated list is one line and one field.
 */
public final class Nqn {
    /** The well-known discovery NQN; reserved, never a subsystem or host NQN of ours. */
    public static final String DISCOVERY = "nqn.2014-08.org.nvmexpress.discovery";
    public static final int MAX_BYTES = 223;
    static final String UUID_PREFIX = "nqn.2014-08.org.nvmexpress:uuid:";
    private static final Pattern UUID_TEXT =
        Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
    private static final Pattern DATE = Pattern.compile("nqn\\.([0-9]{4})-([0-9]{2})\\..*", Pattern.DOTALL);
    private static final Pattern LABEL = Pattern.compile("[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?");

    private Nqn() {
    }

    /** Null when {@code nqn} is acceptable, else why not (a phrase to follow "field: "). */
    public static String problem(String nqn, boolean allowLegacy) {
        if (nqn == null) {
            return "missing";
        }
        String size = sizeProblem(nqn);
        if (size != null) {
            return size;
        }
        String control = controlProblem(nqn);
        if (control != null) {
            return control;
        }
        String strict = strictProblem(nqn);
        if (strict == null) {
            return null;
        }
        return allowLegacy ? legacyProblem(nqn) : strict + " (set \"allowLegacyNqns\": true for free-form names)";
    }

    /** Whether {@code nqn} follows the spec's rules (no legacy names). */
    public static boolean isValid(String nqn) {
        return nqn != null && strictProblem(nqn) == null;
    }

    private static String strictProblem(String nqn) {
        String size = sizeProblem(nqn);
        if (size != null) {
            return size;
        }
        String control = controlProblem(nqn);
        if (control != null) {
            return control;
        }
        if (nqn.startsWith(UUID_PREFIX)) {
            String uuid = nqn.substring(UUID_PREFIX.length());
            return UUID_TEXT.matcher(uuid).matches() ? null
                : "must end in a UUID (8-4-4-4-12 hex digits) after '" + UUID_PREFIX + "', got '" + nqn + "'";
        }
        var date = DATE.matcher(nqn);
        if (!date.matches()) {
            return "must be nqn.yyyy-mm.<reverse domain>:<name> or " + UUID_PREFIX + "<uuid>, got '" + nqn + "'";
        }
        int month = Integer.parseInt(date.group(2));
        if (month < 1 || month > 12 || Integer.parseInt(date.group(1)) == 0) {
            return "the date yyyy-mm must be a real month, got '" + nqn.substring(4, 11) + "'";
        }
        int colon = nqn.indexOf(':', 12);
        if (colon < 0 || colon == nqn.length() - 1) {
            return "must have a name after the reverse domain, separated by ':', got '" + nqn + "'";
        }
        String domain = nqn.substring(12, colon);
        for (String label : domain.split("\\.", -1)) {
            if (!LABEL.matcher(label).matches()) {
                return "the reverse domain '" + domain + "' has a bad label '" + label + "' (labels start with a "
                    + "letter, hold letters, digits and '-', end with a letter or digit, 1..63 characters)";
            }
        }
        return null;
    }

    /**
     * A C0, DEL or C1 character anywhere (the spec's UTF-8 string may hold them after the ':', but no host names
     * itself so, and such a name would reach logs and tools that split on them).
     */
    public static String controlProblem(String nqn) {
        int at = LogText.firstControl(nqn);
        return at < 0 ? null : String.format("must not hold control characters (U+%04X at %d), got \"%s\"",
            (int) nqn.charAt(at), at, LogText.escape(nqn));
    }

    private static String legacyProblem(String nqn) {
        for (int i = 0; i < nqn.length(); i++) {
            char ch = nqn.charAt(i);
            if (Character.isWhitespace(ch) || ch == '/') {
                return "a legacy name may not hold spaces or '/', got '" + nqn + "'";
            }
        }
        return null;
    }

    private static String sizeProblem(String nqn) {
        if (nqn.isEmpty()) {
            return "must not be empty";
        }
        try {
            int bytes = StandardCharsets.UTF_8.newEncoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT).encode(CharBuffer.wrap(nqn)).remaining();
            if (bytes > MAX_BYTES) {
                return "must be at most " + MAX_BYTES + " bytes of UTF-8, got " + bytes;
            }
        } catch (CharacterCodingException e) {
            return "is not valid Unicode text";
        }
        return null;
    }
}
