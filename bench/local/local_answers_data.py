"""The held-out questions for the offline model: short, with known answers, half in Chinese.

Written before any prompt or setting for the offline model was chosen, and not used to choose
one (bench/local/local_answers.py runs them; the tuning questions live in local_answers_tuning.py).
A reply is right when it contains the answer (`expect`, a regex, case-insensitive); a code
question is right when the function it defines passes `checks` in a separate Python process.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Question:
    text: str
    lang: str  # "en" | "zh"
    kind: str  # "fact" | "arithmetic" | "code"
    expect: str = ""  # regex the reply must contain (fact, arithmetic)
    checks: tuple[str, ...] = field(default=())  # assertions on the defined function (code)


QUESTIONS: tuple[Question, ...] = (
    Question("What is the largest planet in our solar system?", "en", "fact", r"jupiter"),
    Question('Who wrote the play "Romeo and Juliet"?', "en", "fact", r"shakespeare"),
    Question("What is the chemical symbol for sodium?", "en", "fact", r"\bNa\b"),
    Question("How many continents are there on Earth?", "en", "fact", r"\b7\b|\bseven\b"),
    Question("At sea level, at what temperature in degrees Celsius does water boil?", "en",
             "fact", r"\b100\b"),
    Question("Which is the largest ocean on Earth?", "en", "fact", r"pacific"),
    Question("What is the capital of Canada?", "en", "fact", r"ottawa"),
    Question("Which gas do plants take from the air for photosynthesis?", "en", "fact",
             r"carbon dioxide|\bCO2\b|CO₂"),
    Question("What is 48 + 27?", "en", "arithmetic", r"\b75\b"),
    Question("What is 12 times 12?", "en", "arithmetic", r"\b144\b"),
    Question("A train travels at 60 km per hour for 3 hours. How many kilometres does it "
             "travel?", "en", "arithmetic", r"\b180\b"),
    Question("Write a Python function is_palindrome(s) that returns True if the string s reads "
             "the same backwards, else False.", "en", "code",
             checks=("is_palindrome('level') is True", "is_palindrome('abc') is False",
                     "is_palindrome('') is True")),
    Question("Write a Python function factorial(n) that returns n! for n >= 0.", "en", "code",
             checks=("factorial(0) == 1", "factorial(5) == 120", "factorial(1) == 1")),
    Question("Write a Python function count_vowels(s) that returns how many vowels (a, e, i, "
             "o, u, upper or lower case) the string s has.", "en", "code",
             checks=("count_vowels('Hello World') == 3", "count_vowels('xyz') == 0",
                     "count_vowels('AEIOU') == 5")),
    Question('What does the Python expression len("hello") return?', "en", "fact", r"\b5\b"),
    Question("In SQL, which keyword removes duplicate rows from the result of a SELECT?", "en",
             "fact", r"distinct"),
    Question("中国的首都是哪座城市？", "zh", "fact", r"北京|beijing"),
    Question("一年有多少个月？", "zh", "fact", r"12|十二"),
    Question("水的化学式是什么？", "zh", "fact", r"H2O|H₂O"),
    Question("《红楼梦》的作者是谁？", "zh", "fact", r"曹雪芹"),
    Question("太阳系中离太阳最近的行星是哪一颗？", "zh", "fact", r"水星|mercury"),
    Question("长城主要位于哪个国家？", "zh", "fact", r"中国|china"),
    Question("一个星期有几天？", "zh", "fact", r"7|七"),
    Question("世界上国土面积最大的国家是哪个？", "zh", "fact", r"俄罗斯|russia"),
    Question("15 加 28 等于多少？", "zh", "arithmetic", r"43"),
    Question("100 减去 37 等于多少？", "zh", "arithmetic", r"63"),
    Question("一个长方形长 8 米、宽 5 米，它的面积是多少平方米？", "zh", "arithmetic", r"40"),
    Question("9 乘以 7 等于多少？", "zh", "arithmetic", r"63"),
    Question("用 Python 写一个函数 reverse_list(items)，返回一个顺序反过来的新列表。", "zh", "code",
             checks=("reverse_list([1, 2, 3]) == [3, 2, 1]", "reverse_list([]) == []")),
    Question("用 Python 写一个函数 is_even(n)，当 n 是偶数时返回 True，否则返回 False。", "zh",
             "code", checks=("is_even(4) is True", "is_even(7) is False",
                             "is_even(0) is True")),
    Question("用 Python 写一个函数 sum_list(nums)，返回列表中所有数字的和。", "zh", "code",
             checks=("sum_list([1, 2, 3]) == 6", "sum_list([]) == 0")),
    Question("在 Python 中，定义一个函数用的是哪个关键字？", "zh", "fact", r"\bdef\b"),
)
