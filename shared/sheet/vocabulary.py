"""The words title blocks label their fields with, and the stage and status words they print,
as data: built from the standard's field list, not from sample sheets.

The fields are ISO 7200's data fields (identification number, title, supplementary title,
revision index, date of issue, sheet number and number of sheets, scale, document type,
document status, legal owner, creator, approver, responsible department, technical
reference, language) and the ones practice adds beside them (checker, project number,
project name, site, discipline, file, sheet size, firm, registration numbers), in the forms
national practice prints: US NCS, UK ISO 19650 (status and suitability), DIN, NF, UNE,
the Italian and Portuguese cartiglio / legenda, the Dutch stempel, the Nordic namnruta and
tegningshoved, the Polish tabliczka, the Czech razítko, GOST 21.101's main inscription,
Japanese 表題欄 and Chinese 标题栏, with the abbreviations they use.

Forms are written as printed; ``labels`` folds them (case, accents, ß, full width,
punctuation) before comparing, so "Zeichnungs-Nr." and "ZEICHNUNGSNR" are one form here.
"""

# Languages: en de fr es it pt nl sv da no pl cs ru ja zh. Each language's forms are one
# string, "; " between forms (``forms`` splits them).
Forms = dict[str, str]

# ISO 7200: identification number (the drawing's, or the sheet's).
NUMBER: Forms = {
    "en": (
        "drawing number; drawing no; dwg no; dwg number; drg no; sheet number; sheet no; sht no; "
        "drawing id; identification number; document number; document no; doc no; plan number; "
        "plan no; drawing ref; drawing reference; sheet id; drawing code; document code"
    ),
    "de": (
        "Zeichnungsnummer; Zeichnungs-Nr.; Zeichn.-Nr.; Zchn.-Nr.; Plannummer; Plan-Nr.; "
        "Blattnummer; Blatt-Nr.; Identnummer; Ident-Nr.; Sachnummer; Dokumentnummer; "
        "Dokumentennummer; Dokument-Nr.; Unterlagennummer; Unterlagen-Nr.; Plancode; "
        "Planschlüssel"
    ),
    "fr": (
        "numéro de plan; n° de plan; n° plan; plan n°; numéro du plan; numéro de dessin; "
        "n° de dessin; dessin n°; numéro de planche; n° de planche; planche n°; "
        "numéro d'identification; référence du plan; réf. plan; numéro de document; "
        "n° de document; n° document; code document"
    ),
    "es": (
        "número de plano; nº de plano; n.º de plano; plano nº; plano n.º; número de dibujo; "
        "dibujo nº; nº de dibujo; lámina nº; nº de lámina; número de lámina; hoja nº; "
        "número de hoja; código de plano; número de documento; nº de documento; "
        "referencia del plano; Número de identificación"
    ),
    "it": (
        "numero tavola; tavola n.; tav. n.; n. tavola; numero disegno; disegno n.; dis. n.; "
        "n. disegno; codice elaborato; elaborato n.; n. elaborato; numero elaborato; "
        "codice tavola; codice disegno; numero documento; codice documento; Tav.; "
        "Numero di identificazione"
    ),
    "pt": (
        "número do desenho; desenho n.º; des. n.º; n.º do desenho; número da folha; folha n.º; "
        "prancha n.º; n.º da prancha; número da prancha; código do desenho; número do documento; "
        "n.º do documento; planta n.º; número de identificação"
    ),
    "nl": (
        "tekeningnummer; tekeningnr; tek.nr.; tek. nr.; bladnummer; blad nr.; documentnummer; "
        "documentnr; tekeningcode; identificatienummer"
    ),
    "sv": (
        "ritningsnummer; ritningsnr; ritning nr; ritn.nr; ritn. nr; bladnummer; dokumentnummer; "
        "Identifikationsnummer"
    ),
    "da": (
        "tegningsnummer; tegningsnr; tegn.nr.; tegn. nr.; bladnummer; dokumentnummer; "
        "identifikationsnummer"
    ),
    "no": (
        "tegningsnummer; tegningsnr; tegn.nr.; tegning nr.; dokumentnummer; identifikasjonsnummer"
    ),
    "pl": (
        "numer rysunku; nr rysunku; nr rys.; rysunek nr; rys. nr; numer arkusza; nr arkusza; "
        "arkusz nr; oznaczenie rysunku; numer dokumentu; nr dokumentu; Numer identyfikacyjny"
    ),
    "cs": (
        "číslo výkresu; č. výkresu; výkres č.; výkres číslo; číslo listu; č. listu; "
        "číslo přílohy; č. přílohy; příloha č.; evidenční číslo; archivní číslo; "
        "číslo dokumentu; Identifikační číslo"
    ),
    "ru": (
        "номер чертежа; № чертежа; чертеж №; чертёж №; Номер листа; № листа; "
        "идентификационный номер"
    ),
    "ja": "図面番号; 図番; 図面No; 図番号; シート番号; 文書番号; 識別番号",
    "zh": "图号; 图纸编号; 图纸号; 图纸编码; 圖號; 圖紙編號; 图别图号; 识别号; 识别编号",
}

# ISO 7200: title and supplementary title.
TITLE: Forms = {
    "en": (
        "title; drawing title; sheet title; dwg title; drawing name; sheet name; "
        "title of drawing; supplementary title; drawing description; drawing"
    ),
    "de": (
        "Zeichnung; Titel; Benennung; Zeichnungstitel; Zeichnungsbenennung; Planinhalt; "
        "Planbezeichnung; Plantitel; Inhalt; Darstellung; Bezeichnung; Zusätzlicher Titel; "
        "Ergänzender Titel; Zusatztitel; Zeichnungsinhalt; Blattinhalt"
    ),
    "fr": (
        "titre; titre du plan; titre du dessin; désignation; intitulé; titre complémentaire; "
        "contenu; nom du plan; dessin"
    ),
    "es": (
        "título; título del plano; título del dibujo; denominación; designación; contenido; "
        "título complementario; nombre del plano; plano"
    ),
    "it": (
        "titolo; titolo tavola; titolo elaborato; titolo del disegno; oggetto; denominazione; "
        "contenuto; titolo supplementare; descrizione elaborato; elaborato"
    ),
    "pt": (
        "título; título do desenho; designação; conteúdo; assunto; título complementar; "
        "título da prancha; desenho; peça desenhada; título suplementar"
    ),
    "nl": (
        "titel; tekeningtitel; omschrijving; onderwerp; inhoud; benaming; tekening; "
        "aanvullende titel"
    ),
    "sv": (
        "titel; ritningstitel; benämning; innehåll; ritningsinnehåll; ritning; "
        "Ritningens innehåll; tilläggstitel"
    ),
    "da": (
        "titel; tegningstitel; tegningsnavn; indhold; betegnelse; emne; tegning; supplerende titel"
    ),
    "no": (
        "tittel; tegningstittel; tegningsnavn; innhold; betegnelse; emne; tegning; "
        "Tegningens navn; tilleggstittel"
    ),
    "pl": (
        "tytuł; tytuł rysunku; nazwa rysunku; temat; zawartość; tytuł dodatkowy; rysunek; "
        "tytuł uzupełniający"
    ),
    "cs": "název; název výkresu; obsah výkresu; obsah; doplňkový název; výkres; doplňující název",
    "ru": (
        "наименование; наименование чертежа; название; название чертежа; заголовок; чертеж; "
        "чертёж; Наименование листа; доп. наименование; дополнительное наименование"
    ),
    "ja": "図面名称; 図面名; 図名; 表題; 名称; 図面題名; タイトル; 図面",
    "zh": "图名; 图纸名称; 图纸名; 标题; 名称; 圖名; 圖紙名稱; 图纸",
}

# ISO 7200: revision index.
REVISION: Forms = {
    "en": (
        "revision; rev; rev no; revision no; revision index; revision number; current revision; "
        "amendment; version"
    ),
    "de": "Index; Änderungsindex; Änderung; Revision; Planindex; Änderungsstand",
    "fr": "indice; révision; rév.; ind.; modification; indice de révision",
    "es": "revisión; rev.; modificación; versión; edición; índice de revisión",
    "it": "revisione; rev.; aggiornamento; agg.; versione; indice di revisione",
    "pt": "revisão; rev.; versão; alteração; índice de revisão",
    "nl": "revisie; rev.; wijziging; versie",
    "sv": "revision; rev.; ändring; ändr.",
    "da": "revision; rev.; ændring",
    "no": "revisjon; rev.; endring",
    "pl": "rewizja; rew.; zmiana; wersja; indeks zmian; Zm.",
    "cs": "revize; rev.; změna; verze",
    "ru": "изм.; изменение; ревизия; кол. уч.; № док.",
    "ja": "改訂; 改訂番号; 改訂記号; リビジョン; 変更; 版",
    "zh": "版本; 版次; 修订; 修改; 修改版次; 版本号",
}

# ISO 7200: date of issue.
ISSUE_DATE: Forms = {
    "en": (
        "date; issue date; date of issue; date issued; drawing date; dwg date; first issue; "
        "original date; document date; date of drawing; first issue date; date of first issue"
    ),
    "de": "Datum; Ausgabedatum; Plandatum; Erstellt am; Datum der Ausgabe; Erstelldatum",
    "fr": "date; date d'émission; date d'édition; date de création; émis le",
    "es": "fecha; fecha de emisión; fecha de edición; fecha de creación",
    "it": "data; data di emissione; data emissione; data di edizione",
    "pt": "data; data de emissão; data de edição",
    "nl": "datum; uitgiftedatum; datum van uitgifte; datum uitgave",
    "sv": "datum; utgivningsdatum; upprättad datum",
    "da": "dato; udgivelsesdato; udgivet",
    "no": "dato; utgivelsesdato; utgitt",
    "pl": "data; data wydania; data opracowania",
    "cs": "datum; datum vydání; datum vyhotovení",
    "ru": "дата; дата выпуска",
    "ja": "日付; 年月日; 作成日; 発行日; 作図日",
    "zh": "日期; 出图日期; 发图日期; 出圖日期; 发布日期",
}

# ISO 7200: sheet number and number of sheets.
SHEET: Forms = {
    "en": "sheet; sheets; no of sheets; number of sheets; total sheets; page",
    "de": "Blatt; Blätter; Blattanzahl; Anzahl Blätter; Bl.; Seite",
    "fr": "feuille; folio; planche; nombre de feuilles; page",
    "es": "hoja; hojas; lámina; número de hojas",
    "it": "foglio; fogli; numero di fogli; tavola",
    "pt": "folha; folhas; número de folhas; prancha",
    "nl": "blad; bladen; aantal bladen",
    "sv": "blad; antal blad",
    "da": "blad; ark; antal blade",
    "no": "blad; ark; antall ark",
    "pl": "arkusz; arkuszy; liczba arkuszy",
    "cs": "list; listů; počet listů",
    "ru": "лист; листов; листы",
    "ja": "枚数; 総枚数; シート",
    "zh": "张数; 共张; 页次; 张",
}

# ISO 7200: scale (practice prints it in every block).
SCALE: Forms = {
    "en": "scale; scales; plot scale; drawing scale; original scale",
    "de": "Maßstab; Maßst.; Mst.",
    "fr": "échelle; éch.; échelles",
    "es": "escala; esc.; escalas",
    "it": "scala; scale",
    "pt": "escala; esc.; escalas",
    "nl": "schaal",
    "sv": "skala",
    "da": "målestok; mål; skala",
    "no": "målestokk; mål; skala",
    "pl": "skala",
    "cs": "měřítko",
    "ru": "масштаб",
    "ja": "縮尺; 尺度; スケール",
    "zh": "比例; 比例尺",
}

# ISO 7200: document type.
DOCUMENT_TYPE: Forms = {
    "en": "document type; type of document; drawing type; doc type",
    "de": "Dokumentart; Dokumententyp; Dokumenttyp; Planart; Zeichnungsart; Dokumentenart",
    "fr": "type de document; nature du document; type de plan",
    "es": "tipo de documento; tipo de plano",
    "it": "tipo di documento; tipo documento; tipologia elaborato",
    "pt": "tipo de documento; tipo de desenho",
    "nl": "documentsoort; documenttype; soort document; tekeningsoort",
    "sv": "dokumenttyp; dokumentart; handlingstyp",
    "da": "dokumenttype; dokumentart",
    "no": "dokumenttype; dokumentart",
    "pl": "rodzaj dokumentu; typ dokumentu",
    "cs": "druh dokumentu; typ dokumentu",
    "ru": "вид документа; тип документа",
    "ja": "文書の種類; 文書種類; 図面種別; 種別",
    "zh": "文件类型; 图纸类别; 图别",
}

# ISO 7200: document status; ISO 19650's status / suitability; the stage a set is issued at.
DOCUMENT_STATUS: Forms = {
    "en": (
        "document status; status; drawing status; suitability; suitability code; "
        "purpose of issue; issue purpose; issued for; stage; phase; status code"
    ),
    "de": (
        "Dokumentstatus; Status; Planstatus; Planstand; Leistungsphase; Phase; Planungsphase; "
        "Bearbeitungsstand; Freigabestatus; Dokumentenstatus"
    ),
    "fr": "statut du document; état du document; statut; état; phase; émis pour; Stade",
    "es": "estado del documento; estado; fase; emitido para",
    "it": "stato del documento; stato; fase; fase progettuale; livello di progettazione",
    "pt": "estado do documento; situação; estado; fase; etapa; emitido para",
    "nl": "documentstatus; status; fase; ontwerpfase; projectfase",
    "sv": "dokumentstatus; status; skede; handlingsstatus; Handling",
    "da": "dokumentstatus; status; fase; projektfase",
    "no": "dokumentstatus; status; fase; prosjektfase",
    "pl": "status dokumentu; status; faza; stadium; etap",
    "cs": "stav dokumentu; status; stupeň; stupeň dokumentace; fáze; Stupeň PD",
    "ru": "статус документа; статус; стадия; этап",
    "ja": "文書の状態; 文書状態; 状態; ステータス; 段階; 設計段階; 区分",
    "zh": "文件状态; 状态; 设计阶段; 阶段; 图纸状态",
}

# ISO 7200: legal owner (the client in practice).
LEGAL_OWNER: Forms = {
    "en": "legal owner; owner; client; employer; copyright",
    "de": "rechtlicher Eigentümer; Eigentümer; Bauherr; Auftraggeber; Bauherrschaft",
    "fr": "propriétaire légal; propriétaire; maître d'ouvrage; maître de l'ouvrage; client; MOA",
    "es": "propietario legal; propietario; promotor; cliente; propiedad",
    "it": "proprietario legale; proprietario; committente; cliente; stazione appaltante",
    "pt": "proprietário legal; proprietário; dono de obra; dono da obra; cliente; requerente",
    "nl": "wettelijk eigenaar; juridisch eigenaar; eigenaar; opdrachtgever; bouwheer",
    "sv": "juridisk ägare; ägare; beställare; byggherre",
    "da": "juridisk ejer; ejer; bygherre; kunde",
    "no": "juridisk eier; eier; byggherre; oppdragsgiver; tiltakshaver",
    "pl": "właściciel prawny; właściciel; inwestor; zamawiający",
    "cs": "právní vlastník; vlastník; investor; objednatel; stavebník; Zákonný vlastník",
    "ru": "правообладатель; владелец; заказчик",
    "ja": "法的所有者; 所有者; 発注者; 建築主; 施主",
    "zh": "法定所有者; 所有者; 建设单位; 业主",
}

# ISO 7200: creator (who drew or designed it, and the office that did).
CREATOR: Forms = {
    "en": (
        "creator; created by; drawn by; drawn; drn; dwn; author; designed by; designed; design; "
        "prepared by; engineer; architect; consultant"
    ),
    "de": (
        "Ersteller; erstellt; erstellt von; gezeichnet; gez.; bearbeitet; bearb.; entworfen; "
        "Planverfasser; Verfasser; Architekt; Planer; Entwurfsverfasser; Erstellt durch"
    ),
    "fr": (
        "créateur; établi par; dessiné; dessiné par; dessinateur; conçu par; auteur; "
        "maître d'œuvre; architecte; bureau d'études; MOE; BET; Dess."
    ),
    "es": (
        "creador; elaborado por; dibujado; dibujó; dibujado por; diseñado; diseñó; proyectó; "
        "autor; arquitecto; proyectista; Ingeniería; Dib."
    ),
    "it": (
        "autore; redatto; redatto da; disegnato; disegnatore; progettista; progettato; "
        "elaborato da; Il progettista; Dis.; Creato da"
    ),
    "pt": "autor; elaborado por; desenhado; desenhou; projetista; projetou; criado por",
    "nl": "auteur; opgesteld door; getekend; get.; ontworpen; ontwerper; tekenaar; Adviseur",
    "sv": "upprättad av; ritad av; ritad; konstruerad; handläggare; upprättare; Arkitekt; Konsult",
    "da": (
        "udarbejdet af; udarbejdet; tegnet; tegnet af; konstrueret; projekteret; Rådgiver; Arkitekt"
    ),
    "no": (
        "utarbeidet av; utarbeidet; tegnet; tegnet av; konstruert; prosjektert; Arkitekt; "
        "Rådgiver; Tegn."
    ),
    "pl": (
        "autor; opracował; rysował; projektował; projektant; wykonał; sporządził; "
        "Jednostka projektowa"
    ),
    "cs": (
        "autor; vypracoval; kreslil; projektoval; zodpovědný projektant; projektant; Zhotovitel; "
        "Vytvořil"
    ),
    "ru": "разработал; разраб.; выполнил; автор; гип; составил; Проектировщик",
    "ja": "作成者; 作成; 設計; 製図; 設計者; 作図; 担当",
    "zh": "编制; 设计; 制图; 绘图; 设计人; 编制人",
}

# ISO 7200: approver; practice adds the checker beside it.
APPROVER: Forms = {
    "en": (
        "approver; approved by; approved; appd; authorised by; authorized by; checked by; "
        "checked; chk; ckd; chkd; reviewed by; verified by; app; app'd; apprd"
    ),
    "de": "genehmigt; freigegeben; Freigabe; geprüft; gepr.; kontrolliert; Prüfer; Genehmigt von",
    "fr": "approuvé; approuvé par; vérifié; vérifié par; visa; contrôlé; contrôlé par; Vérif.",
    "es": "aprobado; aprobado por; aprobó; revisado; revisó; comprobado; verificado",
    "it": "approvato; approvato da; verificato; controllato; contr.; Appr.",
    "pt": "aprovado; aprovado por; aprovou; verificado; verificou; revisto",
    "nl": "goedgekeurd; goedgekeurd door; akkoord; gecontroleerd; gecontr.; gezien",
    "sv": "godkänd; godkänd av; granskad; granskad av; kontrollerad; Ansvarig",
    "da": "godkendt; godkendt af; kontrolleret; kontrol",
    "no": "godkjent; godkjent av; kontrollert; kontroll; Kontr.",
    "pl": "zatwierdził; zatwierdzono; sprawdził; sprawdzający; weryfikował",
    "cs": "schválil; kontroloval; ověřil; zkontroloval; Zodp. projektant; HIP",
    "ru": "утвердил; утв.; проверил; пров.; н. контр.; т. контр.; нормоконтроль",
    "ja": "承認; 承認者; 検図; 照査; 確認; 審査; 管理建築士",
    "zh": "批准; 审定; 审核; 校对; 审批; 核定; 项目负责人",
}

# Practice: the project's number (job, contract, commission).
PROJECT_NUMBER: Forms = {
    "en": (
        "project number; project no; proj no; project #; job number; job no; job #; "
        "contract number; contract no; project ref; project reference; project code; project id; "
        # A recorded map's project is the subdivision, tract or parcel map it files.
        "subdivision no; subdivision number; tract no; tract number; parcel map no"
    ),
    "de": (
        "Projektnummer; Projekt-Nr.; Proj.-Nr.; Auftragsnummer; Auftrags-Nr.; Auftr.-Nr.; "
        "Kommissionsnummer; Kommission; Objektnummer; Objekt-Nr."
    ),
    "fr": (
        "numéro de projet; n° de projet; n° projet; numéro d'affaire; n° d'affaire; affaire n°; "
        "code projet; n° de dossier; numéro de dossier; Réf. projet; N° dossier; Réf. dossier"
    ),
    "es": (
        "número de proyecto; nº de proyecto; proyecto nº; nº proyecto; nº de expediente; "
        "expediente; código de proyecto"
    ),
    "it": (
        "numero progetto; n. progetto; codice progetto; commessa; n. commessa; numero commessa; "
        "Cod. commessa"
    ),
    "pt": (
        "número do projeto; n.º do projeto; projeto n.º; código do projeto; n.º de obra; "
        "Processo n.º; Ref.ª"
    ),
    "nl": "projectnummer; projectnr; proj.nr.; werknummer; werknr",
    "sv": "projektnummer; projektnr; uppdragsnummer; uppdragsnr; uppdr.nr; uppdrag nr.",
    "da": "projektnummer; projektnr; sagsnummer; sagsnr; sag nr.",
    "no": "prosjektnummer; prosjektnr; prosjekt nr.; oppdragsnummer; oppdragsnr; oppdrag nr.",
    "pl": "numer projektu; nr projektu; nr umowy; nr zlecenia; Nr archiwalny",
    "cs": "číslo zakázky; č. zakázky; zakázka č.; číslo projektu; č. projektu; Č. zak.",
    # "Шифр" alone is the project's code (шифр проекта), one for the whole set; GOST's
    # "обозначение" (the document's designation) is shared by every sheet of the document,
    # each sheet numbered by its "Лист".
    "ru": "номер проекта; шифр проекта; шифр; № проекта; номер договора; обозначение",
    "ja": "工事番号; プロジェクト番号; 物件番号; 案件番号; 工番",
    "zh": "项目编号; 工程编号; 工程号; 项目号; 合同号; 工程編號; 设计号",
}

# Practice: the project's name and place.
PROJECT: Forms = {
    "en": "project; project name; project title",
    "de": "Projekt; Bauvorhaben; Vorhaben; Bauobjekt; Objekt; Projektbezeichnung; BV",
    "fr": "projet; opération; nom du projet; ouvrage",
    "es": "proyecto; obra; nombre del proyecto",
    "it": "progetto; opera; intervento; lavori; nome progetto",
    "pt": "projeto; projecto; obra; empreendimento",
    "nl": "project; projectnaam; werk; bouwwerk",
    "sv": "projekt; objekt; projektnamn",
    "da": "projekt; byggesag; projektnavn",
    "no": "prosjekt; prosjektnavn; byggesak",
    "pl": "projekt; obiekt; inwestycja; nazwa inwestycji; Nazwa zamierzenia budowlanego",
    "cs": "stavba; akce; objekt; název stavby",
    "ru": "объект; проект; наименование объекта; стройка",
    "ja": "工事名称; 工事名; 件名; プロジェクト名; 物件名; 建物名称",
    "zh": "工程名称; 项目名称; 工程名; 子项名称; 子项; 工程名稱",
}

# Practice: where the project is (site, address).
SITE: Forms = {
    "en": "location; address; site address",
    "de": "Baustelle; Standort; Adresse; Lage",
    "fr": "chantier; adresse; lieu; localisation",
    "es": "emplazamiento; situación; dirección; ubicación",
    "it": "cantiere; ubicazione; località; indirizzo",
    "pt": "local; localização; morada; endereço",
    "nl": "locatie; adres; bouwplaats",
    "sv": "plats; adress; fastighet",
    "da": "adresse; matrikel; beliggenhed",
    "no": "adresse; eiendom; gnr/bnr",
    "pl": "adres; lokalizacja; działka",
    "cs": "místo stavby; adresa; parcela",
    "ru": "адрес; местоположение",
    "ja": "所在地; 建設地; 住所",
    "zh": "地址; 建设地点; 地点",
}

# Practice: discipline, CAD file, sheet size, the firm.
OTHER: Forms = {
    "en": (
        "discipline; file; file name; cad file; sheet size; firm; company; seal; stamp; "
        "license no; licence no; reg no; registration no; registration number; plot date; "
        "print date; plotted"
    ),
    "de": (
        "Fachbereich; Gewerk; Disziplin; Datei; Dateiname; Format; Blattgröße; Firma; Büro; "
        "Kammer-Nr.; HRB; Handelsregister"
    ),
    "fr": "lot; discipline; fichier; nom du fichier; format; société; SIRET; N° ordre; N° d'ordre",
    "es": "disciplina; especialidad; archivo; fichero; formato; empresa; Colegiado nº; CIF; NIF",
    "it": "disciplina; nome file; formato; società; Ordine Architetti n.; P.IVA; Partita IVA",
    "pt": "especialidade; disciplina; arquivo; ficheiro; formato; empresa; Inscrição OA n.º; NIF",
    "nl": "discipline; bestand; bestandsnaam; formaat; KvK; KvK-nr.; BIG-nr.",
    "sv": "disciplin; filnamn; format; företag; Fil; Org.nr",
    "da": "fag; disciplin; filnavn; format; firma; Fil; CVR; CVR-nr.",
    "no": "fag; disiplin; filnavn; format; firma; Org.nr.; Fil",
    "pl": "branża; plik; nazwa pliku; format; firma; Nr uprawnień; NIP",
    "cs": "profese; soubor; formát; firma; ČKAIT; IČO; IČ",
    "ru": "формат; файл; организация; ИНН; СРО; ОГРН",
    "ja": (
        "ファイル名; 用紙サイズ; 会社名; 事務所名; 設計事務所; 一級建築士; 建築士事務所登録; "
        "登録番号"
    ),
    "zh": "专业; 文件名; 图幅; 设计单位; 注册号; 证书编号",
}

# ISO 7200: responsible department.
DEPARTMENT: Forms = {
    "en": "responsible department; department; dept; responsible dept",
    "de": "verantwortliche Abteilung; Verantwortl. Abt.; Abteilung",
    "fr": "département responsable; service responsable; service",
    "es": "departamento responsable; departamento",
    "it": "reparto responsabile; ufficio responsabile",
    "pt": "departamento responsável; departamento",
    "nl": "verantwoordelijke afdeling; afdeling",
    "sv": "ansvarig avdelning; avdelning",
    "da": "ansvarlig afdeling; afdeling",
    "no": "ansvarlig avdeling; avdeling",
    "pl": "dział odpowiedzialny; dział",
    "cs": "odpovědné oddělení; oddělení",
    "ru": "ответственный отдел; отдел",
    "ja": "担当部署; 責任部署; 部署",
    "zh": "责任部门; 部门",
}

# ISO 7200: technical reference.
TECHNICAL_REFERENCE: Forms = {
    "en": "technical reference; tech ref",
    "de": "technische Referenz; techn. Referenz",
    "fr": "référence technique; réf. technique",
    "es": "referencia técnica",
    "it": "riferimento tecnico",
    "pt": "referência técnica",
    "nl": "technische referentie",
    "sv": "teknisk referens",
    "da": "teknisk reference",
    "no": "teknisk referanse",
    "pl": "odniesienie techniczne",
    "cs": "technický odkaz",
    "ru": "техническая ссылка",
    "ja": "技術参照",
    "zh": "技术参考",
}

# ISO 7200: language code.
LANGUAGE: Forms = {
    "en": "language; lang",
    "de": "Sprache; Spr.",
    "fr": "langue",
    "es": "idioma",
    "it": "lingua",
    "pt": "idioma; língua",
    "nl": "taal",
    "sv": "språk",
    "da": "sprog",
    "no": "språk",
    "pl": "język; jęz.",
    "cs": "jazyk; jaz.",
    "ru": "язык",
    "ja": "言語",
    "zh": "语言",
}

# Field name → its forms by language.
FIELDS: dict[str, Forms] = {
    "number": NUMBER,
    "title": TITLE,
    "revision": REVISION,
    "issue_date": ISSUE_DATE,
    "sheet": SHEET,
    "scale": SCALE,
    "document_type": DOCUMENT_TYPE,
    "document_status": DOCUMENT_STATUS,
    "legal_owner": LEGAL_OWNER,
    "creator": CREATOR,
    "approver": APPROVER,
    "project_number": PROJECT_NUMBER,
    "project": PROJECT,
    "site": SITE,
    "other": OTHER,
    "department": DEPARTMENT,
    "technical_reference": TECHNICAL_REFERENCE,
    "language": LANGUAGE,
}

# Stage and status words (ISO 19650's suitability, national stage names, the banners printed
# across a sheet): never a title. A banner may join several ("PRELIMINARY - NOT FOR
# CONSTRUCTION") and lead with a status code ("S3 - ...").
STAGES: Forms = {
    "en": (
        "issued for construction; for construction; construction issue; not for construction; "
        "not to be used for construction; preliminary; for approval; issued for approval; "
        "for review; issued for review; for information; issued for information; "
        "for information only; for tender; issued for tender; tender; for comment; for comments; "
        "draft; approved; as built; record drawing; for permit; permit set; issued for permit; "
        "bid set; issued for bid; for bidding; superseded; void; work in progress; "
        "suitable for information; suitable for review and comment; "
        "suitable for review & comment; suitable for coordination; suitable for construction; "
        "for coordination; for planning; issued for planning; not for issue; design development; "
        "schematic design; pending approval; for pricing"
    ),
    "de": (
        "Vorabzug; Entwurf; Vorentwurf; Genehmigungsplanung; Ausführungsplanung; Werkplanung; "
        "Ausführungsplan; zur Genehmigung; zur Freigabe; zur Prüfung; zur Ausführung; "
        "zur Information; zur Kenntnis; zur Kenntnisnahme; nicht für die Ausführung; "
        "nicht zur Ausführung; nicht für Ausführung; freigegeben zur Ausführung; Vorplanung; "
        "Entwurfsplanung; Ausschreibung; Bestandsplan; in Bearbeitung; zur Abstimmung; "
        "genehmigt; vorläufig; zur Stellungnahme"
    ),
    "fr": (
        "pour exécution; bon pour exécution; pour approbation; pour avis; pour information; "
        "pour consultation; provisoire; préliminaire; avant-projet; avant-projet sommaire; "
        "avant-projet définitif; ne pas utiliser pour exécution; non valable pour exécution; "
        "esquisse; document provisoire; pour visa; pour commentaires; "
        "dossier de consultation des entreprises; permis de construire; conforme à l'exécution; "
        "dossier des ouvrages exécutés; bon pour accord; approuvé"
    ),
    "es": (
        "para construcción; apto para construcción; no apto para construcción; "
        "no válido para construcción; preliminar; para aprobación; para revisión; "
        "para información; para licitación; anteproyecto; proyecto básico; "
        "proyecto de ejecución; borrador; aprobado; emitido para construcción; "
        "emitido para aprobación; emitido para revisión; conforme a obra; para comentarios; "
        "no para construcción"
    ),
    "it": (
        "per costruzione; esecutivo; progetto esecutivo; progetto definitivo; "
        "progetto preliminare; preliminare; per approvazione; per revisione; per informazione; "
        "per appalto; non per costruzione; non valido per costruzione; bozza; approvato; "
        "emesso per costruzione; emesso per approvazione; come costruito; per commenti; "
        "studio di fattibilità; per esecuzione; emissione preliminare; "
        "emissione per costruzione; emissione per approvazione"
    ),
    "pt": (
        "para construção; para execução; não para construção; não válido para construção; "
        "preliminar; para aprovação; para revisão; para informação; para concurso; anteprojeto; "
        "projeto básico; projeto executivo; projeto de execução; estudo prévio; licenciamento; "
        "rascunho; aprovado; emitido para construção; emitido para aprovação; "
        "conforme construído; como construído; para comentários"
    ),
    "nl": (
        "voor uitvoering; niet voor uitvoering; voorlopig; voorlopig ontwerp; "
        "definitief ontwerp; bestek; technisch ontwerp; voor goedkeuring; ter goedkeuring; "
        "ter informatie; ter beoordeling; ter revisie; concept; schetsontwerp; revisietekening; "
        "aanbesteding; goedgekeurd; vergunning; omgevingsvergunning; uitvoeringsontwerp; "
        "voor informatie"
    ),
    "sv": (
        "för byggnation; bygghandling; förfrågningsunderlag; systemhandling; programhandling; "
        "preliminär; för godkännande; för granskning; för information; ej för byggnation; "
        "utkast; relationshandling; godkänd; bygglovshandling; ej för produktion; "
        "granskningshandling; fastställd"
    ),
    "da": (
        "til udførelse; udbud; udbudsprojekt; hovedprojekt; forprojekt; dispositionsforslag; "
        "ikke til udførelse; foreløbig; til godkendelse; til orientering; til kommentering; "
        "udkast; som udført; myndighedsprojekt; godkendt; projektforslag"
    ),
    "no": (
        "for bygging; arbeidstegning; anbudsgrunnlag; forprosjekt; detaljprosjekt; "
        "ikke for bygging; foreløpig; for godkjenning; til godkjenning; for informasjon; "
        "til informasjon; for kommentar; til uttalelse; utkast; som bygget; skisseprosjekt; "
        "rammesøknad; godkjent; anbud"
    ),
    "pl": (
        "do realizacji; do budowy; projekt wykonawczy; projekt budowlany; projekt koncepcyjny; "
        "koncepcja; wstępny; do zatwierdzenia; do akceptacji; do uzgodnienia; do informacji; "
        "do przetargu; nie do realizacji; nie do budowy; szkic; powykonawczy; zatwierdzono; "
        "do opinii; projekt powykonawczy; do wiadomości"
    ),
    "cs": (
        "pro provedení stavby; dokumentace pro provedení stavby; pro stavební povolení; "
        "dokumentace pro stavební povolení; studie; předběžný; ke schválení; pro schválení; "
        "pro informaci; k připomínkám; pro výběr zhotovitele; není pro provedení stavby; "
        "neplatí pro provedení stavby; koncept; skutečné provedení; "
        "dokumentace skutečného provedení; schváleno; realizační dokumentace; k projednání; "
        "pouze pro informaci; neplatí pro realizaci; pro realizaci"
    ),
    "ru": (
        "рабочая документация; рабочий проект; проектная документация; эскизный проект; "
        "предварительный; на согласование; для согласования; на утверждение; для информации; "
        "не для строительства; в производство работ; к производству работ; согласовано; "
        "утверждаю; исполнительная документация; черновик; для тендера; предварительно"
    ),
    "ja": (
        "施工用; 実施設計; 基本設計; 概略設計; 承認用; 承認図; 確認用; 参考図; 参考用; 検討用; "
        "検討図; 速報; 暫定; 予備; 施工不可; 施工用ではない; 竣工図; 入札用; 見積用; 工事用; "
        "打合せ用; 提出用; 作成中; 承認申請用; 確認申請用; 施工図"
    ),
    "zh": (
        "施工图; 施工用; 初步设计; 方案设计; 扩初设计; 仅供参考; 供审批; 送审; 审批用; 报批; "
        "报审; 不得用于施工; 非施工用; 草图; 竣工图; 招标图; 招标用; 初稿; 已批准; 施工图设计; "
        "供参考; 仅供审查; 送审稿"
    ),
}

# The months' names and their abbreviations, as dates print them ("17 Apr 2023", "marzec
# 2023", "12 августа 2023").
MONTHS: Forms = {
    "en": (
        "january; february; march; april; may; june; july; august; september; october; november; "
        "december; jan; feb; mar; apr; jun; jul; aug; sep; sept; oct; nov; dec"
    ),
    "de": (
        "Januar; Jänner; Februar; März; April; Mai; Juni; Juli; August; September; Oktober; "
        "November; Dezember; Jan; Feb; Mär; Mrz; Apr; Jun; Jul; Aug; Sep; Okt; Nov; Dez"
    ),
    "fr": (
        "janvier; février; mars; avril; mai; juin; juillet; août; septembre; octobre; novembre; "
        "décembre; janv; févr; fév; avr; juil; sept; oct; nov; déc"
    ),
    "es": (
        "enero; febrero; marzo; abril; mayo; junio; julio; agosto; septiembre; setiembre; "
        "octubre; noviembre; diciembre; ene; feb; mar; abr; jun; jul; ago; sep; sept; oct; nov; "
        "dic"
    ),
    "it": (
        "gennaio; febbraio; marzo; aprile; maggio; giugno; luglio; agosto; settembre; ottobre; "
        "novembre; dicembre; gen; feb; mar; apr; mag; giu; lug; ago; set; ott; nov; dic"
    ),
    "pt": (
        "janeiro; fevereiro; março; abril; maio; junho; julho; agosto; setembro; outubro; "
        "novembro; dezembro; jan; fev; mar; abr; mai; jun; jul; ago; set; out; nov; dez"
    ),
    "nl": (
        "januari; februari; maart; april; mei; juni; juli; augustus; september; oktober; "
        "november; december; jan; feb; mrt; apr; jun; jul; aug; sep; okt; nov; dec"
    ),
    "sv": (
        "januari; februari; mars; april; maj; juni; juli; augusti; september; oktober; november; "
        "december; okt"
    ),
    "da": (
        "januar; februar; marts; april; maj; juni; juli; august; september; oktober; november; "
        "december"
    ),
    "no": (
        "januar; februar; mars; april; mai; juni; juli; august; september; oktober; november; "
        "desember; des"
    ),
    "pl": (
        "styczeń; luty; marzec; kwiecień; maj; czerwiec; lipiec; sierpień; wrzesień; "
        "październik; listopad; grudzień; stycznia; lutego; marca; kwietnia; maja; czerwca; "
        "lipca; sierpnia; września; października; listopada; grudnia; sty; lut; kwi; cze; lip; "
        "sie; wrz; paź; lis; gru"
    ),
    "cs": (
        "leden; únor; březen; duben; květen; červen; červenec; srpen; září; říjen; listopad; "
        "prosinec; ledna; února; března; dubna; května; června; července; srpna; října; "
        "listopadu; prosince"
    ),
    "ru": (
        "январь; февраль; март; апрель; май; июнь; июль; август; сентябрь; октябрь; ноябрь; "
        "декабрь; января; февраля; марта; апреля; мая; июня; июля; августа; сентября; октября; "
        "ноября; декабря; янв; фев; мар; апр; июн; июл; авг; сен; окт; ноя; дек"
    ),
}

# The parts of a date an unfilled title block prints for its format ("Month Day, Year",
# "MM/DD/YYYY", "TT.MM.JJJJ", "JJ/MM/AAAA", "ДД.ММ.ГГГГ"). "JJ" is a day in French and a
# year in German; a year is never one letter (initials "J.M.D." are no format).
DATE_TEMPLATE_DAY: Forms = {
    "codes": "D; DD; T; TT; J; JJ; G; GG; ДД",
    "en": "day",
    "de": "Tag",
    "fr": "jour",
    "es": "día",
    "it": "giorno",
    "pt": "dia",
    "nl": "dag",
}
DATE_TEMPLATE_MONTH: Forms = {
    "codes": "M; MM; MMM; ММ",
    "en": "month",
    "de": "Monat",
    "fr": "mois",
    "es": "mes",
    "it": "mese",
    "pt": "mês",
    "nl": "maand",
}
DATE_TEMPLATE_YEAR: Forms = {
    "codes": "YY; YYYY; JJ; JJJJ; AA; AAAA; RR; RRRR; ГГ; ГГГГ",
    "en": "year",
    "de": "Jahr",
    "fr": "année",
    "es": "año",
    "it": "anno",
    "pt": "ano",
    "nl": "jaar",
}

# A scale field's words where it prints no ratio: "as indicated", "see drawing" (and
# ``NO_SCALE_WORDS``).
SCALE_WORDS: Forms = {
    "en": "as indicated; as shown; as noted; varies; see drawing; see drawings",
    "de": "wie angegeben; siehe Zeichnung; siehe Plan; diverse; verschiedene",
    "fr": "indiquée; indiquées; voir plan; variable; variables; selon indication; diverses",
    "es": "indicada; indicadas; ver plano; varias; según se indica",
    "it": "indicata; indicate; vedi disegno; varie; come indicato",
    "pt": "indicada; indicadas; ver desenho; várias; conforme indicado",
    "nl": "zie tekening; aangegeven; zoals aangegeven; diverse",
    "sv": "se ritning; enligt ritning; som angivet; olika",
    "da": "som angivet; se tegning; diverse",
    "no": "som vist; som angitt; se tegning; diverse",
    "pl": "jak na rysunku; wg rysunku; według rysunku; różne; jak pokazano",
    "cs": "viz výkres; dle výkresu; různá; jak je uvedeno",
    "ru": "см. на чертеже; указан на чертеже; разные",
    "ja": "図示; 図示による; 各図による; 指示による",
    "zh": "见图; 如图; 详见图纸; 示意",
}

# A drawing that says it has no scale, in a scale field or under a view's title.
NO_SCALE_WORDS: Forms = {
    "en": "not to scale; n.t.s.",
    "de": "ohne Maßstab; o. M.; nicht maßstäblich",
    "fr": "sans échelle",
    "es": "sin escala",
    "it": "senza scala; fuori scala",
    "pt": "sem escala",
    "nl": "geen schaal; niet op schaal",
    "sv": "ingen skala; ej skalenlig",
    "da": "ingen målestok; uden målestok",
    "no": "uten målestokk; ingen målestokk",
    "pl": "bez skali",
    "cs": "bez měřítka",
    "ru": "без масштаба",
    "ja": "ノンスケール",
    "zh": "不按比例",
}


# A graphic scale's heading: a bar that measures a view drawn to scale.
GRAPHIC_SCALE_WORDS: Forms = {
    "en": (
        "graphic scale; graphic scales; scale in feet; scale in meters; scale in metres; bar scale"
    ),
    "de": "Maßstabsleiste; grafischer Maßstab; Maßstabsbalken",
    "fr": "échelle graphique",
    "es": "escala gráfica",
    "it": "scala grafica",
    "pt": "escala gráfica",
    "nl": "schaalstok; grafische schaal",
    "sv": "skalstock; grafisk skala",
    "da": "målestokslinje; grafisk målestok",
    "no": "målestokkslinjal; grafisk målestokk",
    "pl": "podziałka liniowa; skala liniowa",
    "cs": "grafické měřítko",
    "ru": "линейный масштаб",
    "ja": "スケールバー",
    "zh": "线段比例尺; 图示比例尺",
}


# The kinds of drawing a sheet's title names ("LIGHTING PLAN", "Schnitt A-A", "平面図"); a
# compound ending in one ("Erdgeschossgrundriss", "bewehrungsplan") names it too.
DRAWING_KINDS: Forms = {
    "en": (
        "plan; plans; section; sections; elevation; elevations; detail; details; schedule; "
        "schedules; diagram; diagrams; layout; layouts; notes; legend; symbols; calculations; "
        "profile; profiles; riser; risers; axonometric; isometric; perspective; cover"
    ),
    "de": (
        "plan; grundriss; grundrisse; schnitt; schnitte; ansicht; ansichten; detail; details; "
        "lageplan; schema; übersicht; deckenspiegel; stückliste"
    ),
    "fr": "plan; plans; coupe; coupes; façade; façades; élévation; détail; détails; schéma",
    "es": "planta; plano; sección; secciones; alzado; alzados; detalle; detalles; corte; esquema",
    "it": "pianta; piante; sezione; sezioni; prospetto; prospetti; dettaglio; dettagli; schema",
    "pt": "planta; plantas; corte; cortes; alçado; alçados; fachada; detalhe; pormenor; esquema",
    "nl": "plattegrond; doorsnede; doorsneden; aanzicht; gevel; gevels; detail; schema",
    "sv": "plan; planritning; sektion; fasad; fasader; detalj; detaljer; schema",
    "da": "plan; snit; facade; facader; detalje; detaljer; skema",
    "no": "plan; snitt; fasade; fasader; detalj; detaljer; skjema",
    "pl": "rzut; przekrój; przekroje; elewacja; elewacje; szczegół; detal; schemat",
    "cs": "půdorys; řez; řezy; pohled; pohledy; detail; schéma",
    "ru": "план; разрез; разрезы; фасад; фасады; узел; узлы; схема; деталь",
    "ja": "図",
    "zh": "图; 圖",
}


# A firm's legal form, which ends its name ("Ingegneria Rossi S.r.l.", "Müller GmbH") or,
# in Russian, opens it ("ООО «Вектор»"), or stands anywhere in it in Japanese and Chinese.
LEGAL_FORM_ENDINGS = (
    "ltd; ltd.; limited; inc; inc.; incorporated; llc; l.l.c.; pllc; pllc.; llp; gmbh; mbh; ag; "
    "kg; s.r.l.; srl; s.p.a.; spa; s.a.; s.l.; s.l.u.; sarl; s.a.r.l.; sas; "
    "s.a.s.; b.v.; n.v.; aps; a/s; as; asa; ab; oy; oyj; s.r.o.; a.s.; o.o.; lda.; ltda.; "
    "sp.j.; plc; corp.; corp"
)
LEGAL_FORM_OPENINGS = "ооо; оао; зао; пао; ао"
LEGAL_FORM_WORDS = "株式会社; 有限会社; 合同会社; 有限公司; 股份有限公司; 有限责任公司"


def forms(text: str) -> tuple[str, ...]:
    """A language's forms, one string each."""
    return tuple(form.strip() for form in text.split(";") if form.strip())
