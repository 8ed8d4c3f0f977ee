"""Word lists the intent generator draws from (all written for this project).

Nothing here is taken from a third-party corpus: the lists are ordinary English words and
invented names, chosen so the student model learns *where* a name or an area sits in a
sentence rather than memorising a fixed vocabulary.
"""

from __future__ import annotations

# spoken words for domains, device classes and media classes are shared with the runtime's
# slot builder, so generated spans and their expected values cannot drift apart
from edge_agent.nlu.slots import (  # noqa: F401
    BINARY_CLASSES,
    COVER_CLASS_WORDS,
    DOMAIN_WORDS,
    MEDIA_CLASSES,
    SENSOR_CLASSES,
)

AREAS: tuple[str, ...] = (
    "Kitchen", "Living Room", "Bedroom", "Master Bedroom", "Guest Room", "Bathroom", "Office",
    "Garage", "Basement", "Attic", "Hallway", "Dining Room", "Laundry Room", "Nursery",
    "Kids Room", "Playroom", "Study", "Den", "Family Room", "Porch", "Patio", "Garden",
    "Backyard", "Front Yard", "Driveway", "Entrance", "Entryway", "Foyer", "Pantry", "Closet",
    "Walk In Closet", "Sunroom", "Library", "Gym", "Workshop", "Shed", "Balcony", "Terrace",
    "Deck", "Lounge", "Media Room", "Home Theater", "Game Room", "Mudroom", "Utility Room",
    "Stairs", "Landing", "Upstairs Hallway", "Downstairs Bathroom", "Guest Bathroom",
    "Master Bath", "Ensuite", "Loft", "Studio", "Cellar", "Wine Cellar", "Boiler Room",
    "Server Room", "Outside", "Pool", "Pool House", "Greenhouse", "Carport", "Back Porch",
    "Front Porch", "Toilet", "Powder Room", "Craft Room", "Music Room", "Reading Nook",
    "Emma's Room", "Jack's Room", "Noah's Room", "Mia's Room", "Lucas Bedroom", "Sofia's Bedroom",
    "Second Bedroom", "Third Bedroom", "Spare Room", "Back Room", "Front Room", "Annex",
    "Conservatory", "Cloakroom", "Dressing Room", "Guest House", "Barn", "Stable", "Courtyard",
)

FLOORS: tuple[str, ...] = (
    "Upstairs", "Downstairs", "Ground Floor", "First Floor", "Second Floor", "Third Floor",
    "Top Floor", "Basement", "Main Floor", "Lower Level", "Upper Level", "Attic Floor",
    "Mezzanine", "Lower Ground", "Loft Level",
)

# syllables for invented names ("Zorvak", "Melipa"): the model must not rely on known names
SYLLABLES: tuple[str, ...] = (
    "ba", "be", "bo", "da", "de", "di", "do", "fa", "fe", "ga", "go", "ka", "ke", "ki", "ko", "la",
    "le", "li", "lo", "lu", "ma", "me", "mi", "mo", "na", "ne", "ni", "no", "pa", "pe", "po", "ra",
    "re", "ri", "ro", "ru", "sa", "se", "si", "so", "ta", "te", "ti", "to", "va", "ve", "vi", "vo",
    "za", "ze", "zo", "xan", "quin", "tor", "vak", "lin", "mar", "bel", "dor", "fen", "gar", "hal",
    "jor", "kel", "nor", "pel", "ros", "sil", "tam", "vel", "wen", "yor", "zel", "bri", "cla", "dra",
    "fro", "glo", "kra", "plu", "sna", "tri", "sto", "spe", "ska",
)

PEOPLE: tuple[str, ...] = (
    "Anna", "Ben", "Chloe", "David", "Elena", "Felix", "Grace", "Henry", "Isla", "Jonas", "Kai",
    "Lena", "Marco", "Nina", "Omar", "Paula", "Quinn", "Rosa", "Sam", "Tara", "Umar", "Vera",
    "Will", "Yara", "Zoe", "Mum", "Dad", "Grandma", "Grandpa",
)

MODIFIERS: tuple[str, ...] = (
    "Ceiling", "Desk", "Floor", "Bedside", "Reading", "Corner", "Window", "Wall", "Table", "Accent",
    "Pendant", "Strip", "Main", "Side", "Front", "Back", "Left", "Right", "Upper", "Lower", "Big",
    "Small", "Night", "Mood", "Cabinet", "Counter", "Island", "Mirror", "Porch", "Garden", "Path",
    "Tree", "Shelf", "Bar", "Hall", "Stair", "Closet", "Vanity", "Bookcase", "Sofa", "Couch", "Bed",
    "Tv", "Aquarium", "Christmas", "Fairy", "Spot", "Under Cabinet", "Overhead", "Backyard",
    "Office", "Kitchen", "Bedroom", "Garage", "Patio", "Play", "Party", "Movie", "Game", "Work", "Music",
    "Sleep", "Dinner", "Open", "Cozy", "Guest", "Baby", "Lava", "Reading Nook", "Play Corner", "Tv Wall",
)

# noun-first name endings ("Curtain Left", "Lamp 2")
SUFFIXES: tuple[str, ...] = (
    "Left", "Right", "1", "2", "3", "One", "Two", "North", "South", "East", "West", "Upstairs", "Downstairs",
    "Main", "Back", "Front", "Big", "Small", "Mini", "Pro", "Max",
)

# short names of things that carry several binary sensors ("Phone": battery, charging, connectivity ...)
SENSOR_DEVICES: tuple[str, ...] = (
    "Phone", "Tablet", "Laptop", "Car", "Watch", "Computer", "Washer", "Dryer", "Fridge", "Freezer", "Road",
    "Mains", "Siren", "Cookie Jar", "Water Pipes", "Pet Door", "Shed Window", "Front Gate", "Mailbox",
    "Basement Floor", "Boiler", "Pool Pump", "Back Door", "Dishwasher", "Printer", "Router", "Doorbell",
    "Server", "Greenhouse", "Attic Hatch", "Skylight", "Crib", "Aquarium", "Bike", "Headphones",
)

# (noun, domain, device_class or None) used to build entity names
DEVICE_NOUNS: tuple[tuple[str, str, str | None], ...] = (
    ("Light", "light", None), ("Lights", "light", None), ("Lamp", "light", None),
    ("Bulb", "light", None), ("Spotlight", "light", None), ("Led Strip", "light", None),
    ("Chandelier", "light", None), ("Sconce", "light", None), ("Downlights", "light", None),
    ("Switch", "switch", None), ("Plug", "switch", None), ("Outlet", "switch", None),
    ("Socket", "switch", None), ("Heater", "switch", None), ("Kettle", "switch", None),
    ("Coffee Maker", "switch", None), ("Dehumidifier", "switch", None), ("Pump", "switch", None),
    ("Sprinkler", "switch", None), ("Fountain", "switch", None), ("Christmas Tree", "switch", None),
    ("Fan", "fan", None), ("Ceiling Fan", "fan", None), ("Air Purifier", "fan", None),
    ("Extractor", "fan", None), ("Ventilator", "fan", None),
    ("Blinds", "cover", "blind"), ("Blind", "cover", "blind"), ("Curtain", "cover", "curtain"),
    ("Curtains", "cover", "curtain"), ("Shade", "cover", "shade"), ("Shades", "cover", "shade"),
    ("Shutter", "cover", "shutter"), ("Shutters", "cover", "shutter"),
    ("Garage Door", "cover", "garage"), ("Gate", "cover", "gate"), ("Awning", "cover", "awning"),
    ("Skylight", "cover", "window"), ("Roller", "cover", "shutter"),
    ("Lock", "lock", None), ("Door Lock", "lock", None), ("Deadbolt", "lock", None),
    ("Door", "lock", None),
    ("Thermostat", "climate", None), ("Heat Pump", "climate", None), ("Air Conditioner", "climate", None),
    ("Radiator", "climate", None), ("Ac", "climate", None),
    ("Tv", "media_player", None), ("Speaker", "media_player", None), ("Soundbar", "media_player", None),
    ("Stereo", "media_player", None), ("Radio", "media_player", None), ("Receiver", "media_player", None),
    ("Vacuum", "vacuum", None), ("Robot", "vacuum", None), ("Roomba", "vacuum", None),
    ("Mower", "lawn_mower", None), ("Lawn Mower", "lawn_mower", None),
    ("Valve", "valve", None), ("Water Valve", "valve", None), ("Gas Valve", "valve", None),
)



COLORS: tuple[str, ...] = (
    "red", "green", "blue", "yellow", "orange", "purple", "pink", "white", "warm white",
    "cool white", "cyan", "magenta", "violet", "teal", "turquoise", "lime", "gold", "amber",
    "indigo", "lavender", "brown", "crimson", "coral", "salmon", "navy", "aqua", "beige",
    "maroon", "olive", "silver", "black",
)



# list names (besides the shopping list) and things put on lists
LIST_NAMES: tuple[str, ...] = (
    "Groceries", "Chores", "To Do", "Todo", "Hardware Store", "Costco", "Pharmacy", "Packing",
    "Gift Ideas", "Birthday", "Camping", "Work", "Homework", "Garden", "Movies To Watch",
    "Books", "Reading", "Weekend", "Errands", "Party", "Christmas", "Holiday", "Baby",
    "Pet Supplies", "Market", "Farmers Market", "Bakery", "Wishlist", "Repairs", "School",
)
ITEMS: tuple[str, ...] = (
    "apples", "bananas", "milk", "eggs", "bread", "butter", "cheese", "coffee", "tea", "rice",
    "pasta", "tomatoes", "onions", "garlic", "potatoes", "carrots", "chicken", "salmon", "yogurt",
    "orange juice", "paper towels", "toilet paper", "dish soap", "laundry detergent", "batteries",
    "light bulbs", "dog food", "cat litter", "shampoo", "toothpaste", "olive oil", "flour",
    "sugar", "cereal", "oat milk", "avocados", "lemons", "spinach", "ice cream", "frozen peas",
    "trash bags", "sponges", "candles", "a birthday card", "wrapping paper", "screws", "duct tape",
    "call the plumber", "water the plants", "mow the lawn", "take out the trash", "fix the fence",
    "book the dentist", "pay the electricity bill", "clean the gutters", "walk the dog",
    "vacuum the stairs", "return the library books", "renew the passport", "wash the car",
    "two pounds of ground beef", "a dozen eggs", "six bagels", "almond butter", "maple syrup",
    "sunscreen", "bug spray", "sparkling water", "granola", "hummus", "tortillas", "soy sauce",
)

TIMER_NAMES: tuple[str, ...] = (
    "pizza", "pasta", "eggs", "laundry", "oven", "cookies", "bread", "tea", "nap", "homework",
    "workout", "rice", "roast", "cake", "steak", "meditation", "break", "parking", "potatoes",
    "soup", "chicken", "brownies", "plank", "study", "dryer", "washing", "bath", "kettle",
)

TITLE_WORDS: tuple[str, ...] = (
    "blue", "night", "summer", "river", "golden", "midnight", "city", "dream", "fire", "ocean",
    "silver", "wild", "lost", "moon", "heart", "road", "shadow", "electric", "paper", "glass",
    "northern", "velvet", "morning", "winter", "garden", "stone", "echo", "thunder", "sweet",
    "broken", "little", "secret", "last", "first", "crimson", "island", "desert", "storm",
    "happy", "lonely", "starlight", "harbor", "neon", "copper", "forest", "empire", "kings",
    "rain", "sky", "sunset", "highway", "coffee", "jazz", "piano", "chill", "lullaby", "dance",
)

WEATHER_PLACES: tuple[str, ...] = (
    "London", "Paris", "Berlin", "Tokyo", "New York", "Chicago", "Seattle", "Denver", "Madrid",
    "Rome", "Sydney", "Toronto", "Dublin", "Oslo", "Lisbon", "Boston", "Austin", "Miami",
    "Cape Town", "Nairobi", "Mumbai", "Seoul", "Vienna", "Prague", "Amsterdam", "Zurich",
    "San Diego", "Portland", "Phoenix", "Atlanta", "Helsinki", "Lyon", "Munich", "Glasgow",
)

BROADCAST_MESSAGES: tuple[str, ...] = (
    "dinner is ready", "we are leaving in five minutes", "time to wake up", "the movie is starting",
    "lunch is on the table", "please come downstairs", "the car is here", "it's bedtime",
    "grandma is on the phone", "turn off your screens", "breakfast is ready", "the pizza arrived",
    "time for school", "someone is at the door", "we need help in the kitchen", "it's time to go",
    "dessert is served", "the game is on", "homework time", "lights out in ten minutes",
)

COMMAND_TAILS: tuple[str, ...] = (
    "turn off the lights", "open the garage door", "lock the front door", "turn on the fan",
    "close the blinds", "turn off the tv", "start the vacuum", "turn on the porch light",
    "turn off the heater", "close the curtains", "pause the music", "turn the kitchen lights off",
)
