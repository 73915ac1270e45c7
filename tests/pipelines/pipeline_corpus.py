"""The pipelines tests' corpus (a small sensor catalogue) and readers for the prompts an agent sends."""

from __future__ import annotations

import re

CORPUS = {
    "mic-ip": "The IM72D128 digital MEMS microphone has an IP rating of IP57: it keeps working after immersion in water.",
    "mic-snr": "The IM72D128 reaches a signal-to-noise ratio of 72 dB and draws 0.5 mA in low-power mode.",
    "mic-sleep": "A sleep mode with wake-up on sound lets battery devices keep the microphone listening.",
    "co2-size": "The PAS CO2 sensor module measures 14 x 13.8 x 7.5 mm, small enough for battery air-quality monitors.",
    "co2-method": "Photoacoustic spectroscopy lets the PAS CO2 sensor measure carbon dioxide directly.",
    "pressure": "The KP253 barometric pressure sensor is qualified for automotive side-airbag systems.",
    "current": "TLE4971 magnetic current sensors come in the TISON-8-6 package for currents up to 120 A.",
    "radar": "The 60 GHz radar sensor detects presence and vital signs such as breathing through thin walls.",
}


def passage_ids(prompt: str) -> list[str]:
    """The passage ids an answer prompt showed the generator, in order."""
    return re.findall(r'<passage id="([^"]+)"', prompt)


def question_of(prompt: str) -> str:
    return re.search(r"<question>\n(.*?)\n</question>", prompt, re.DOTALL).group(1)
