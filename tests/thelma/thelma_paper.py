"""The worked examples of THELMA's Appendix A, with the judge answering exactly as the appendix."""

from __future__ import annotations

from langrag_eval.testing import ThelmaScript

QUERY = "When was the Chimnabai Clock Tower completed, and who was it named after?"
SUB_QUESTIONS = ["When was the Chimnabai Clock Tower completed?", "Who was Chimnabai Clock Tower named after?"]

# A.1: two retrieved sources, the first essential, the second not.
A1_SOURCES = [
    "The Chimnabai Clock Tower, also as the Raopura Tower, is a clock tower situated in the Raopura area "
    "of Vadodara, Gujarat, India. It was completed in 1896 and named in memory of Chimnabai (1864-1885), "
    "a queen and the first wife of Sayajirao Gaekwad III of Baroda State. It was built in "
    "Indo-Saracenic architecture style.",
    "Chimnabai Clock Tower was inaugurated by Mir Kamaluddin Hussainkhan, the last Nawab of Baroda. "
    "During the rule of Gaekwad, it was a stoppage for horse drawn trams. It was constructed from the "
    "funds raised by the citizens of Baroda State. The premises of the tower were rented by the Vadodara "
    "Municipal Corporation for last three decades. In 2017, the municipal commissioner, Rao, ordered to "
    "vacate the tower to conserve it as a heritage monument. The mechanical system of the tower clock "
    "was replaced by DC motor.",
]

# A.2: one source that says when, but not after whom.
A2_SOURCE = (
    "The Chimnabai Clock Tower, also known as the Raopura Tower, is a clock tower situated in the Raopura "
    "area of Vadodara, Gujarat, India. It was completed in 1896. It was built in Indo-Saracenic "
    "architecture style. History It was inaugurated by Mir Kamaluddin Hussainkhan, the last Nawab of "
    "Baroda. During the rule of Gaekwad, it was a stoppage for horse drawn trams. It was constructed from "
    "the funds raised by the citizens of Baroda State. In 2017, the municipal commissioner, Vinod Rao, "
    "ordered to vacate the tower to conserve it as a heritage monument.")

# A.3 / A.5: the verbose response and its seven claims.
A3_RESPONSE = ("The Chimnabai Clock Tower was completed in 1896. It was named after Chimnabai I, who was a "
               "queen and the first wife of Sayajirao Gaekwad III of Baroda State. The construction of "
               "clock tower was completed in 1896.")
A3_CLAIMS = ["The Chimnabai Clock Tower was completed in 1896.", "The place was named after Chimnabai I.",
             "Chimnabai I was a queen.", "Chimnabai I was the first wife of Sayajirao Gaekwad III.",
             "Sayajirao Gaekwad III was the ruler of Baroda State.", "The clock tower was constructed.",
             "The construction of the clock tower was completed in 1896."]
A3_ESSENTIAL = [1, 1, 0, 0, 0, 0, 1]

# A.4: a response that answers only when.
A4_RESPONSE = "The Chimnabai Clock Tower was completed in 1896."

# A.6: the response gets the year wrong (1856); the appendix lists its claims as below.
A6_SOURCE = (
    "The Chimnabai Clock Tower, also known as the Raopura Tower, is a clock tower situated in the Raopura "
    "area of Vadodara, Gujarat, India. It was completed in 1896 and named in memory of Chimnabai I "
    "(1864-1885), a queen and the first wife of Sayajirao Gaekwad III of Baroda State. It was built in "
    "Indo-Saracenic architecture style.")
A6_RESPONSE = A3_RESPONSE.replace("1896", "1856")
A6_SUPPORTED = [0, 1, 1, 1, 1, 1, 0]


def appendix_script() -> ThelmaScript:
    """Decompositions and verdicts exactly as printed in Appendix A."""
    return ThelmaScript(
        claims={A3_RESPONSE: A3_CLAIMS, A6_RESPONSE: A3_CLAIMS, A4_RESPONSE: [A4_RESPONSE]},
        questions={QUERY: SUB_QUESTIONS},
        source={A1_SOURCES[0]: 1, A1_SOURCES[1]: 0},
        essential=dict(zip(A3_CLAIMS, A3_ESSENTIAL)),
        answers={(SUB_QUESTIONS[0], A2_SOURCE): 1, (SUB_QUESTIONS[1], A2_SOURCE): 0},
        addresses={(SUB_QUESTIONS[0], A4_RESPONSE): 1, (SUB_QUESTIONS[1], A4_RESPONSE): 0},
        supported=dict(zip(A3_CLAIMS, A6_SUPPORTED)),
    )
