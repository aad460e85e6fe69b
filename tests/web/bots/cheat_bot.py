"""A bot that plays legally until it is first asked to defend, then answers with an
attack of a card it holds that nobody has seen: an illegal action whose forfeit detail
names that hidden card (which the other seats and spectators must never be told)."""

from protocol.bot import run_function


def decide(observation: dict, legal: list) -> dict:
    if observation["phase"] == "defend":
        seen = set(observation["known"][observation["seat"]])
        secret = next(c for c in observation["hand"] if c not in seen)
        return {"type": "attack", "card": secret}
    return legal[0]


if __name__ == "__main__":
    run_function(decide, name="cheat", version="1.0")
