"""Tuning questions for the offline model: the ones settings were chosen on (sampling, system
prompt). Kept apart from the held-out set in local_answers_data.py, which chose nothing."""

from __future__ import annotations

from bench.local.local_answers_data import Question

TUNING: tuple[Question, ...] = (
    Question("What is the capital of Japan?", "en", "fact", r"tokyo"),
    Question("What is the chemical symbol for gold?", "en", "fact", r"\bAu\b"),
    Question("How many legs does a spider have?", "en", "fact", r"\b8\b|\beight\b"),
    Question("What is 17 * 23?", "en", "arithmetic", r"\b391\b"),
    Question("Write a Python function square(x) that returns x squared.", "en", "code",
             checks=("square(3) == 9", "square(-2) == 4")),
    Question("法国的首都是哪里？", "zh", "fact", r"巴黎|paris"),
    Question("光在真空中的速度大约是每秒多少公里？", "zh", "fact",
             r"30\s*万|300,?000|3\s*[×x*]\s*10"),
    Question("36 除以 4 等于多少？", "zh", "arithmetic", r"\b9\b|九"),
    Question("用 Python 写一个函数 max_of(a, b)，返回两个数中较大的那个。", "zh", "code",
             checks=("max_of(3, 5) == 5", "max_of(-1, -4) == -1")),
    Question("《西游记》的作者是谁？", "zh", "fact", r"吴承恩"),
)
