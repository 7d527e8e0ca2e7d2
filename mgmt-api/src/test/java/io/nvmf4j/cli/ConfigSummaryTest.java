package io.nvmf4j.cli;

import io.nvmf4j.service.api.Http;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The line 'config import' prints, for today's answer (the document) and for one wrapped with restartRequired. */
class ConfigSummaryTest {
    private static final String DOC = "{\"bdevs\":[{\"name\":\"m\"}],\"subsystems\":[{\"namespaces\":[{},{}],"
        + "\"listeners\":[{}]}],\"referrals\":[]}";

    @Test
    void theDocumentItself() {
        assertThat(ConfigCommands.applied("f.json", Http.parse(DOC)))
            .isEqualTo("applied f.json: 1 bdevs, 1 subsystems, 2 namespaces, 1 listeners, 0 referrals");
    }

    @Test
    void aWrappedAnswerWithRestartRequired() {
        assertThat(ConfigCommands.applied("f.json", Http.parse("{\"restartRequired\":true,\"config\":" + DOC + "}")))
            .isEqualTo("applied f.json: 1 bdevs, 1 subsystems, 2 namespaces, 1 listeners, 0 referrals; some changes "
                + "apply at the next start (restartRequired)");
    }
}
