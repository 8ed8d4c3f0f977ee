"""Out-of-scope requests: what a home voice satellite hears that none of our intents handle.

Categories: general knowledge and math, chit-chat, commands for other domains (email, calendar,
messages, online shopping, navigation, travel, reminders, alarms, apps, finance, sports),
statements and feelings, device near-misses (they mention lights, doors or timers but ask for
nothing we can do), and fragments. All templates are the project's own.
"""

from __future__ import annotations

from firmware_tools.data import intent_lexicon as lx
from firmware_tools.data.intent_grammar import Fill, Piece, expand

__all__ = ["make_oos"]

_TOPIC = ("the budget", "the trip", "dinner plans", "the project", "tomorrow's meeting", "the invoice", "the party",
          "the kids' school", "the weekend", "the quarterly report", "the car repair", "the new lease")
_COUNTRY = ("france", "japan", "brazil", "canada", "australia", "egypt", "norway", "kenya", "peru", "india", "italy",
            "mexico", "germany", "spain", "chile", "vietnam", "poland", "iceland", "morocco", "turkey")
_THING = ("the telephone", "the light bulb", "the internet", "penicillin", "the airplane", "paper", "the bicycle",
          "the printing press", "television", "the microwave", "velcro", "the refrigerator", "chocolate", "glass",
          "the steam engine", "the radio", "electricity", "the camera", "the thermostat", "the vacuum cleaner")
_ANIMAL = ("elephant", "giraffe", "octopus", "penguin", "dolphin", "cat", "dog", "bee", "owl", "shark", "horse",
           "koala", "tiger", "frog", "whale", "ant", "parrot", "camel")
_DISH = ("lasagna", "banana bread", "pad thai", "chili", "pancakes", "risotto", "chocolate chip cookies", "guacamole",
         "tomato soup", "fried rice", "apple pie", "curry", "omelette", "meatballs", "sourdough bread")
_POI = ("gas station", "coffee shop", "pharmacy", "hospital", "pizza place", "grocery store", "atm", "bank", "park",
        "library", "gym", "hardware store", "post office", "vet", "bakery", "charging station", "sushi restaurant")
_APP = ("spotify", "netflix", "youtube", "the camera", "my email", "whatsapp", "the browser", "instagram", "maps",
        "the calculator", "settings", "the banking app", "zoom", "my photos", "tiktok")
_UNIT_PAIRS = (("miles", "kilometers"), ("pounds", "kilos"), ("cups", "milliliters"), ("inches", "centimeters"),
               ("feet", "meters"), ("ounces", "grams"), ("gallons", "liters"), ("dollars", "euros"),
               ("fahrenheit", "celsius"), ("yards", "meters"))
_LANG = ("spanish", "french", "german", "italian", "japanese", "chinese", "portuguese", "dutch", "korean", "arabic")
_PHRASE = ("good morning", "thank you very much", "where is the train station", "i love you", "how much does it cost",
           "see you tomorrow", "happy birthday", "the kitchen is on fire", "turn left", "excuse me")
_TIMEPHRASE = ("at 7 am", "tomorrow morning", "at noon", "on friday", "next tuesday at 3", "at half past six",
               "tonight at 8", "in the morning", "on monday at 9:30", "this afternoon", "at 6:45", "next week")
_TASK = ("call the doctor", "pick up the kids", "buy a gift for mom", "pay the rent", "take my medicine",
         "water the plants", "feed the cat", "submit the report", "book a haircut", "renew my license",
         "check the mail", "charge the car", "return the package", "bring the umbrella")
_TEAM = ("the lakers", "the yankees", "arsenal", "the patriots", "real madrid", "the bulls", "the warriors",
         "manchester united", "the cowboys", "the red sox", "barcelona", "the celtics")
_COMPANY = ("apple", "tesla", "microsoft", "amazon", "google", "nvidia", "netflix", "ford", "nike", "disney")
_FEEL = ("tired", "bored", "hungry", "sad", "happy", "stressed", "excited", "sleepy", "lonely", "nervous", "thirsty",
         "sick", "confused", "annoyed", "proud", "grumpy", "busy", "late")
_DEVICE = ("lights", "light", "lamp", "thermostat", "garage door", "front door", "blinds", "tv", "fan", "vacuum",
           "robot vacuum", "speaker", "curtains", "lock", "heater", "smart plug", "doorbell", "camera", "router",
           "fridge", "washing machine", "dishwasher", "oven", "microwave", "lawn mower", "air purifier", "timer")
_BRAND = ("ikea", "philips", "samsung", "sony", "bosch", "lg", "xiaomi", "ring", "nest", "ecobee", "dyson")
_ROOM = tuple(a.lower() for a in lx.AREAS[:40])
_WORDS = ("banana", "purple", "yesterday", "seven", "quickly", "mountain", "keyboard", "window", "happy", "river",
          "orange", "table", "ninety", "sock", "lamp", "cloud", "pepper", "green", "monday", "rocket", "spoon")

_TEMPLATES: tuple[str, ...] = (
    # general knowledge
    "who (invented|discovered|came up with) {thing} ?", "what is the capital of {country} ?",
    "how (big|old|tall|fast|heavy) is (a|an) {animal} ?", "how many legs does (a|an) {animal} have ?",
    "what do {animal}s eat ?", "(where|how) do {animal}s (live|sleep) ?", "what's the population of {country} ?",
    "what language do they speak in {country} ?", "when was {thing} invented ?", "what is the (speed of light|tallest mountain|longest river|biggest ocean) ?",
    "who wrote (hamlet|the odyssey|war and peace|pride and prejudice) ?", "who was the first person on the moon ?",
    "why is the sky blue ?", "how far away is the (moon|sun|nearest star) ?", "what's the meaning of (life|the word {word}) ?",
    "how do you spell {word} ?", "(define|what does) {word} (mean)", "what's a synonym for {word} ?",
    "what is {n} (times|plus|minus|divided by) {m} ?", "what's the square root of {n} ?", "(calculate|compute) {n} (times|plus) {m}",
    "how many {u1} (are in|in) a {u2} ?", "convert {n} {u1} to {u2}", "how many {u2} is {n} {u1} ?",
    "translate {phrase} (into|to) {lang}", "how do you say {phrase} in {lang} ?", "what's the currency of {country} ?",
    "how many days (are there )?in a leap year ?".replace("(are there )?", "[are there] "), "what's the boiling point of water ?",
    "is (a|an) {animal} a mammal ?", "tell me a fact about {animal}s", "who is the president of {country} ?",
    "how does {thing} work ?", "explain (quantum physics|photosynthesis|inflation|gravity|black holes) [to me]",
    "what year did (the war|world war two|the titanic sink|the berlin wall fall) ?",
    "what time (is it|zone is it) in {city} ?", "what's the time difference between here and {city} ?",
    "how long does it take to (boil an egg|bake a cake|cook rice|get to the moon) ?",
    "what's the date of (easter|thanksgiving|the next full moon) (this year|next year) ?",
    "how many days (until|till) (christmas|my birthday|halloween|new year) ?", "when is (mother's day|the super bowl|the next eclipse) ?",
    # chit-chat
    "how are you [today|doing] ?", "(tell|say) (me )?a joke".replace("(me )?", "[me] "), "what's your name ?",
    "who (made|built|created) you ?", "are you (a robot|alive|listening|smart|real|happy) ?", "do you like {animal}s ?",
    "i love you", "you're (awesome|the best|useless|funny|so slow|amazing)", "(good|great) (morning|night|evening|job)",
    "thank you [so much]", "thanks [a lot]", "(sing|sing me) a song", "what's (up|new) ?", "(hello|hi|hey) (there|buddy|friend)",
    "what can you do ?", "what (is|was) your favorite (color|food|movie|song) ?", "do you dream ?", "let's (chat|talk) for a bit",
    "(tell|read) me a (story|poem|riddle|bedtime story)", "what should i (eat|cook|watch|do) (tonight|today) ?",
    "are you (there|awake)", "how old are you ?", "(flip a coin|roll a dice|pick a random number)", "knock knock",
    "(say|repeat after me) {phrase}", "what's (the meaning of life|love) ?", "do you have feelings ?", "good (boy|girl)",
    # other domains
    "(send|write) an email to {person} about {topic}", "(read|check) my (emails|inbox|messages)", "reply to {person}'s email",
    "(text|message) {person} (that )?{phrase}".replace("(that )?", "[that] "), "call {person} [on speaker]", "(call|dial) {n} {m}",
    "schedule a meeting with {person} {time}", "what's on my calendar {time} ?", "(add|put) (a|an) (meeting|appointment|event) (to|on|in) my calendar {time}",
    "(cancel|move|reschedule) my (meeting|appointment|dentist appointment) {time}", "(remind me|set a reminder) to {task} {time}",
    "remind me to {task}", "set an alarm for {time}", "wake me up {time}", "(snooze|stop|turn off) (the|my) alarm",
    "order {item} (online|on amazon|from the store)", "buy {item} online", "(track|where is) my (package|order|delivery) ?",
    "(navigate|take me|give me directions) to {city}", "how (long|far) is it to {city} ?", "find (a|the nearest) {poi} [near me]",
    "(is there|where is) a {poi} (near me|nearby|around here) ?", "book (a|an) (uber|taxi|cab|ride) to {city}",
    "(book|find) (a flight|flights|a hotel|a train) to {city} [{time}]", "(order|get me) (a pizza|sushi|takeout|chinese food)",
    "find a recipe for {dish}", "how do i (make|cook) {dish} ?", "what's in {dish} ?",
    "(open|launch|start) {app}", "(close|quit) {app}", "(search|google|look up) {thing} [on the web|online]",
    "what's the stock price of {company} ?", "how (much is|is) (bitcoin|the dollar|gold) (doing|worth) [today] ?",
    "who won the {team} game [last night] ?", "when do {team} play (next|tonight) ?", "what's the score of the {team} game ?",
    "(post|share) (this|that) on (facebook|instagram|twitter)", "take a (picture|photo|screenshot)", "record a (video|voice memo)",
    "(pay|transfer) {n} dollars to {person}", "what's my (bank balance|credit score) ?", "how many steps did i (walk|take) today ?",
    "(start|stop) my workout", "(start|begin) (a|my) (meditation|yoga session|run)", "start my car", "lock my (phone|laptop|computer)",
    "what's the news [today] ?", "(read|tell) me the (headlines|news)", "what's trending [on twitter] ?",
    "will it rain (next week|on saturday) ?", "(book|make) a (table|reservation) for {n} {time}",
    "add {person} to the group chat", "(add|save) {person} to my contacts", "add {n} and {m}", "add this song to my playlist",
    "(create|make) a new (automation|user|account|dashboard|device)", "(update|upgrade) the firmware", "(restart|reboot) (the router|yourself|home assistant)",
    "rename the {device} to {person}", "(pair|connect) (my|a new) (phone|headphones|bluetooth speaker)",
    "(turn on|enable) (bluetooth|airplane mode|wifi|do not disturb) on my phone", "(turn|switch) (off|on) my phone",
    "what's my wifi password ?", "(how|can i) (change|reset) the wifi password ?", "(play|let's play) (a game|chess|trivia|twenty questions)",
    # statements / feelings
    "i'm {feel}", "i am so {feel} (today|right now)", "i feel {feel}", "(my|the) (dog|cat|baby|kids) (is|are) (asleep|hungry|outside|playing)",
    "i'm going to the (store|gym|office|airport|beach)", "(we|i) had a (long|great|rough) day", "i just got home from work",
    "that movie was (great|terrible|boring)", "it's my birthday (today|tomorrow)", "i forgot my keys", "the mail is here",
    "dinner was delicious", "i can't find my (keys|wallet|glasses)", "where did i put my (keys|phone|wallet) ?",
    "my (mom|brother|sister|boss) is coming over {time}",
    # device near-misses: mention devices, ask nothing we can do
    "my {device} is from {brand}", "what brand is (the|my) {device} ?", "how much did the {device} cost ?",
    "who installed the {device} ?", "why is the {device} (making a weird noise|flickering|beeping|so slow) ?",
    "how do i (reset|clean|install|fix|repair) (the|my|a) {device} ?", "(should|can) i buy a new {device} ?",
    "(order|buy) (a|new) {device} (online|on amazon) [for the {room}]", "what's the warranty on the {device} ?",
    "(i|we) (painted|repainted) the {room} {color}", "the {room} looks (nice|messy|great|small) [today]",
    "(is|are) {color} a good color for the {room} ?", "what color should i paint the {room} ?",
    "how many watts does (a|the) {device} use ?", "is it safe to leave the {device} (on|running) overnight ?",
    "(write|tell me) a (poem|story|song) about (the|a) {device}", "what is a smart {device} ?", "the {device} (is|was) broken [again]",
    "i (bought|ordered|got) a new {device} [for the {room}]", "the {device} in the {room} is (old|new|pretty|ugly|dusty)",
    "(remind me|don't let me forget) to (fix|clean|replace) the {device}", "when should i replace the {device} batteries ?",
    "who left the {device} (on|open) ?", "why did you turn (on|off) the {device} ?", "what time does the {poi} (open|close) ?",
    "what's the best {device} to buy ?", "(compare|review) {brand} and {brand2} {device}s", "how long does the {device} last ?",
    "the {room} (needs|could use) (a new rug|new furniture|a plant|cleaning)", "how big is the {room} ?", "(clean|tidy) (my|the) {room} yourself",
    "play the (piano|guitar|drums) for me", "i'm going to (cook|read|sleep|shower) in the {room}", "(let's|we should) redecorate the {room}",
    "open the (pod bay doors|box|present|jar|window on my computer)", "close (the deal|your eyes|the book|the tab)",
    "(pause|stop) (talking|that noise|everything you're doing) and (listen|tell me a joke)",
    "what's your (volume|timer|light) (policy|setting) ?", "set (the table|an example|a goal|the record) (for|straight) {time}",
    "turn (left|right) at the (light|lights|corner)", "switch (seats|places|sides) with me", "turn the page",
    "is the {poi} open {time} ?", "how much time do i need to (get ready|drive to work|cook pasta) ?",
    # fragments / noise
    "{word}", "{word} {word2}", "{word} {word2} {word3}", "um", "uh huh", "hmm", "what", "okay", "yes", "no", "maybe",
    "the", "and then", "so anyway", "hello ?", "test test", "one two three", "blah blah", "hey", "huh ?", "wait",
    "{room}", "{device}", "{color}", "{n}", "{person}", "(hey|ok|okay) (google|siri|alexa|computer)",
)


def make_oos(g: object) -> tuple[str | None, list[Piece], dict[str, object]]:
    from firmware_tools.data.intents import _G

    assert isinstance(g, _G)
    rng = g.rng

    def word(options: tuple[str, ...]) -> Fill:
        return Fill([(rng.choice(options), None)], {})

    makers = {
        "thing": lambda: word(_THING), "country": lambda: word(_COUNTRY), "animal": lambda: word(_ANIMAL),
        "word": lambda: word(_WORDS), "word2": lambda: word(_WORDS), "word3": lambda: word(_WORDS),
        "n": lambda: Fill([(str(rng.randint(2, 999)) if rng.random() < 0.6 else rng.choice(
            ("seven", "twelve", "forty two", "three hundred", "nine", "fifty")), None)], {}),
        "m": lambda: Fill([(str(rng.randint(2, 99)), None)], {}),
        "u1": lambda: word(tuple(u for u, _ in _UNIT_PAIRS)), "u2": lambda: word(tuple(u for _, u in _UNIT_PAIRS)),
        "lang": lambda: word(_LANG), "phrase": lambda: word(_PHRASE), "city": lambda: word(
            tuple(c.lower() for c in lx.WEATHER_PLACES)), "person": lambda: word(tuple(p.lower() for p in lx.PEOPLE)),
        "topic": lambda: word(_TOPIC), "time": lambda: word(_TIMEPHRASE), "task": lambda: word(_TASK),
        "item": lambda: word(lx.ITEMS[:45]), "poi": lambda: word(_POI), "dish": lambda: word(_DISH),
        "app": lambda: word(_APP), "company": lambda: word(_COMPANY), "team": lambda: word(_TEAM),
        "feel": lambda: word(_FEEL), "device": lambda: word(_DEVICE), "brand": lambda: word(_BRAND),
        "brand2": lambda: word(_BRAND), "room": lambda: word(_ROOM), "color": lambda: word(lx.COLORS),
    }
    g.makers.update(makers)
    slots: dict[str, object] = {}
    pieces = expand(rng.choice(_TEMPLATES), rng, g, slots)
    if rng.random() < 0.15:
        pieces = [(rng.choice(("hey", "um", "so", "ok", "okay", "hey there", "excuse me", "quick question")), None), *pieces]
    return None, [(text, None) for text, _ in pieces], {}
