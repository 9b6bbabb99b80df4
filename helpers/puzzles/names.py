"""The people of the puzzles: given names by gender, from many languages, short enough for the token budget.

The organisers' examples use Indian names ("Ravi", "Meena") beside single letters; a model that only ever saw one
short English list (or letters in runs, F, G, H, J) learns the list, not the reading. Every name here is one word,
ASCII, at most 7 letters (a name costs 1-3 tokens with Qwen's or SmolLM2's tokenizer), unique across both lists (a
name says its person's gender only where a family needs that), and none is a relation word or an English word a
clue could be misread as (no "Will", "Rose", "Faith").
"""

from __future__ import annotations

MALE = (
    # English
    "Adam", "Alan", "Ben", "Carl", "Dan", "David", "Eric", "Frank", "George", "Harry", "Henry", "Ian", "Jack", "James",
    "John", "Keith", "Luke", "Mark", "Neil", "Oscar", "Paul", "Peter", "Roy", "Sean", "Tom", "Victor",
    # Indian
    "Ravi", "Amit", "Arjun", "Rahul", "Vikram", "Suresh", "Rohan", "Kiran", "Anil", "Manoj", "Deepak", "Sanjay",
    "Vivek", "Nikhil", "Rajesh", "Varun", "Gopal", "Harish", "Mohan", "Naveen",
    # Chinese, Japanese, Korean
    "Wei", "Jun", "Hao", "Lei", "Ming", "Kenji", "Hiroshi", "Takeshi", "Minho", "Jisung",
    # Arabic, Persian, Turkish
    "Omar", "Karim", "Tariq", "Yusuf", "Hassan", "Reza", "Emre", "Kemal",
    # African
    "Kwame", "Chidi", "Tunde", "Jabari", "Kofi", "Sipho",
    # Spanish, Portuguese, Italian, French
    "Diego", "Carlos", "Mateo", "Pablo", "Joao", "Marco", "Luca", "Pierre", "Hugo",
    # German, Slavic, Nordic
    "Lukas", "Jonas", "Ivan", "Pavel", "Dmitri", "Anders", "Lars", "Erik",
)

FEMALE = (
    # English
    "Alice", "Amy", "Anna", "Beth", "Carol", "Clare", "Diana", "Ella", "Emma", "Eve", "Fiona", "Hannah", "Helen",
    "Irene", "Jane", "Julia", "Kate", "Laura", "Lucy", "Mary", "Nina", "Paula", "Ruth", "Sarah", "Tina", "Wendy",
    # Indian
    "Meena", "Priya", "Anjali", "Kavita", "Sunita", "Pooja", "Neha", "Divya", "Asha", "Lakshmi", "Rekha", "Sneha",
    "Geeta", "Radha", "Shreya", "Nisha", "Usha", "Swati", "Rani", "Komal",
    # Chinese, Japanese, Korean
    "Mei", "Lin", "Xiu", "Yan", "Ling", "Yuki", "Haruka", "Sakura", "Jiwoo", "Minji",
    # Arabic, Persian, Turkish
    "Fatima", "Layla", "Amira", "Zainab", "Noor", "Shirin", "Elif", "Aylin",
    # African
    "Amara", "Ngozi", "Zola", "Ayana", "Thandi", "Adaeze",
    # Spanish, Portuguese, Italian, French
    "Lucia", "Sofia", "Carmen", "Elena", "Ines", "Giulia", "Chiara", "Camille", "Elodie",
    # German, Slavic, Nordic
    "Greta", "Lena", "Olga", "Irina", "Katya", "Astrid", "Ingrid", "Freya",
)

NAMES = tuple((n, "m") for n in MALE) + tuple((n, "f") for n in FEMALE)
