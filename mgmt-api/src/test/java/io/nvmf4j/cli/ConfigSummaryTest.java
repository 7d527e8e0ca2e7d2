package io.nvmf4j.cli;

import io.nvmf4j.service.api.Http;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The line 'config import' prints, without and with start-up settings that wait for a restart. */
class ConfigSummaryTest {
    private static final String DOC = "{\"bdevs\":[{\"name\":\"m\"}],\"subsystems\":[{\"namespaces\":[{},{}],"
        + "\"listeners\":[{}]}],\"referrals\":[]}";

    @Test
    void theDocumentItself() {
        assertThat(ConfigCommands.applied("f.json", Http.parse(DOC), ""))
            .isEqualTo("applied f.json: 1 bdevs, 1 subsystems, 2 namespaces, 1 listeners, 0 referrals");
    }

    @Test
    void withTheSettingsThatWaitForARestart() {
        assertThat(ConfigCommands.applied("f.json", Http.parse(DOC), "cores, tcp.maxQueueDepth"))
            .isEqualTo("applied f.json: 1 bdevs, 1 subsystems, 2 namespaces, 1 listeners, 0 referrals; at the next "
                + "start (restart required): cores, tcp.maxQueueDepth");
    }
}
