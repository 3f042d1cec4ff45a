//! Longer than 400 lines because the four languages' topic table ([`LANGUAGES`]) is content read whole.
//!
//! What the demo's customers ask and how the team answers, in the contacts' languages.
//!
//! A thread picks a topic; its first exchanges are the topic's own (question and answer, follow-up
//! and answer, thanks and goodbye), the middle of a long thread uses the language's generic
//! exchanges. Customer lines and reply lines never coincide, and a thread alternates between
//! them, so no two consecutive messages of a thread read the same.

/// One topic: what the customer writes and what the reply says, turn by turn.
pub(super) struct Topic {
    /// The question, a follow-up, the thanks.
    pub customer: [&'static str; 3],
    /// The answer, the answer to the follow-up, the goodbye.
    pub reply: [&'static str; 3],
}

/// Everything written in one language.
pub(super) struct Language {
    /// ISO 639-1 code, as in `contacts.language`.
    pub code: &'static str,
    /// The topics; every language has the same ones in the same order.
    pub topics: [Topic; 6],
    /// Exchanges for the middle of a long conversation: (customer, reply).
    pub middle: [(&'static str, &'static str); 4],
    /// Approved templates: a follow-up once the 24-hour window has closed, and the closing notice.
    pub templates: [&'static str; 2],
}

/// `{order}` is replaced by a number derived from the thread.
pub(super) const LANGUAGES: [Language; 4] = [
    Language {
        code: "en",
        topics: [
            Topic {
                customer: [
                    "Hi, where is my order #{order}? It was supposed to arrive yesterday.",
                    "Can you send me the tracking link?",
                    "Got it, thanks a lot!",
                ],
                reply: [
                    "Sorry for the wait! Order #{order} left our warehouse on Monday and the courier expects to deliver it tomorrow before 6 pm.",
                    "Of course: https://track.example.com/{order}. You will also get a text message when it is out for delivery.",
                    "You're welcome! Write to us here if anything else comes up.",
                ],
            },
            Topic {
                customer: [
                    "Can I still change the delivery address for order #{order}?",
                    "The new address is 42 Harbour Street, Bristol BS1 4RN.",
                    "Perfect, thank you.",
                ],
                reply: [
                    "Yes, it has not shipped yet. What is the new address?",
                    "Done: order #{order} will go to 42 Harbour Street, Bristol BS1 4RN. The delivery date stays the same.",
                    "Happy to help. Have a great day!",
                ],
            },
            Topic {
                customer: [
                    "The jacket I received is too small. How do I return it?",
                    "Do I have to pay for the return shipping?",
                    "Great, I'll drop it off tomorrow.",
                ],
                reply: [
                    "No problem: you have 30 days to return it. I've just e-mailed you a prepaid return label for order #{order}.",
                    "No, returns are free. The refund reaches your card within 5 business days of us receiving the parcel.",
                    "Perfect. We'll let you know as soon as it arrives.",
                ],
            },
            Topic {
                customer: [
                    "The app crashes every time I try to pay.",
                    "iPhone 13, app version 4.2.1.",
                    "Updated it and the payment went through. Thanks!",
                ],
                reply: [
                    "Sorry about that! Which phone and which version of the app are you using?",
                    "Thanks. Version 4.2.2 fixes a crash at checkout on iOS: please update from the App Store and try again.",
                    "Great to hear! Your order #{order} is confirmed.",
                ],
            },
            Topic {
                customer: [
                    "Could you send me the invoice for my last order?",
                    "It needs to show my company name, Brightside Ltd.",
                    "Received, thank you!",
                ],
                reply: [
                    "Sure! Is the invoice for order #{order}? I can send it to the e-mail address on your account.",
                    "Done: the invoice for order #{order} is made out to Brightside Ltd and is on its way to your inbox.",
                    "Anytime. Have a nice day!",
                ],
            },
            Topic {
                customer: [
                    "I'd like to book a fitting appointment this week.",
                    "Thursday at 10 works for me.",
                    "See you on Thursday!",
                ],
                reply: [
                    "We have Thursday at 10:00 or Friday at 15:30 free. Which suits you?",
                    "Booked: Thursday at 10:00 at our King Street store. You'll get a reminder the day before.",
                    "See you then!",
                ],
            },
        ],
        middle: [
            ("Any update on this?", "Still on it: I've asked the warehouse team and will get back to you within the hour."),
            ("Sorry, one more question: do you deliver on Saturdays?", "Yes, Saturday delivery is available in most areas for a small fee."),
            ("I sent you a photo, did you get it?", "Yes, got it, thanks. That helps a lot."),
            ("OK, I'll wait.", "Thanks for your patience!"),
        ],
        templates: [
            "Hello! We're following up on your request #{order}. Reply to this message to continue the conversation.",
            "Your request #{order} has been resolved. Reply to this message if you need anything else.",
        ],
    },
    Language {
        code: "pt",
        topics: [
            Topic {
                customer: [
                    "Oi, cadê meu pedido #{order}? Era para ter chegado ontem.",
                    "Pode me mandar o link de rastreio?",
                    "Entendi, muito obrigada!",
                ],
                reply: [
                    "Desculpe a demora! O pedido #{order} saiu do nosso depósito na segunda e a transportadora prevê a entrega amanhã até as 18h.",
                    "Claro: https://track.example.com/{order}. Você também vai receber um SMS quando sair para entrega.",
                    "Por nada! Qualquer coisa é só escrever aqui.",
                ],
            },
            Topic {
                customer: [
                    "Ainda dá para mudar o endereço de entrega do pedido #{order}?",
                    "O novo endereço é Rua Augusta, 1500, apto 32, São Paulo.",
                    "Perfeito, obrigado.",
                ],
                reply: [
                    "Dá sim, ele ainda não foi enviado. Qual é o novo endereço?",
                    "Pronto: o pedido #{order} vai para a Rua Augusta, 1500, apto 32. A data de entrega continua a mesma.",
                    "Fico feliz em ajudar. Tenha um ótimo dia!",
                ],
            },
            Topic {
                customer: [
                    "A jaqueta que recebi ficou pequena. Como faço a troca?",
                    "Preciso pagar o frete da devolução?",
                    "Ótimo, vou postar amanhã.",
                ],
                reply: [
                    "Sem problema: você tem 30 dias para devolver. Acabei de enviar por e-mail uma etiqueta de devolução pré-paga do pedido #{order}.",
                    "Não, a devolução é grátis. O reembolso cai no seu cartão em até 5 dias úteis depois que recebermos o pacote.",
                    "Perfeito. Avisamos assim que chegar.",
                ],
            },
            Topic {
                customer: [
                    "O aplicativo fecha sozinho toda vez que tento pagar.",
                    "Samsung Galaxy S22, versão 4.2.1.",
                    "Atualizei e o pagamento passou. Valeu!",
                ],
                reply: [
                    "Sinto muito! Qual é o seu celular e a versão do aplicativo?",
                    "Obrigado. A versão 4.2.2 corrige um erro no pagamento: atualize pela Play Store e tente de novo.",
                    "Que bom! Seu pedido #{order} está confirmado.",
                ],
            },
            Topic {
                customer: [
                    "Vocês podem me enviar a nota fiscal da última compra?",
                    "Precisa sair no CNPJ da minha empresa, Solar Design Ltda.",
                    "Recebi, obrigado!",
                ],
                reply: [
                    "Claro! É a nota do pedido #{order}? Posso enviar para o e-mail da sua conta.",
                    "Feito: a nota do pedido #{order} foi emitida para a Solar Design Ltda e já está no seu e-mail.",
                    "Às ordens. Bom dia!",
                ],
            },
            Topic {
                customer: [
                    "Queria agendar uma prova de roupa esta semana.",
                    "Quinta às 10h fica bom para mim.",
                    "Até quinta!",
                ],
                reply: [
                    "Temos quinta às 10h ou sexta às 15h30. Qual prefere?",
                    "Agendado: quinta às 10h na loja da Oscar Freire. Você recebe um lembrete na véspera.",
                    "Até lá!",
                ],
            },
        ],
        middle: [
            ("Alguma novidade?", "Ainda estou verificando com o depósito; retorno em até uma hora."),
            ("Desculpa, mais uma dúvida: vocês entregam aos sábados?", "Sim, entregamos aos sábados na maioria das regiões, com uma pequena taxa."),
            ("Mandei uma foto, chegou?", "Chegou sim, obrigado. Ajuda bastante."),
            ("Tá bom, vou aguardar.", "Obrigado pela paciência!"),
        ],
        templates: [
            "Olá! Estamos acompanhando sua solicitação #{order}. Responda esta mensagem para continuar a conversa.",
            "Sua solicitação #{order} foi resolvida. Responda esta mensagem se precisar de mais alguma coisa.",
        ],
    },
    Language {
        code: "es",
        topics: [
            Topic {
                customer: [
                    "Hola, ¿dónde está mi pedido #{order}? Tenía que llegar ayer.",
                    "¿Me pueden mandar el enlace de seguimiento?",
                    "Entendido, ¡muchas gracias!",
                ],
                reply: [
                    "¡Perdón por la espera! El pedido #{order} salió del almacén el lunes y la paquetería prevé entregarlo mañana antes de las 18:00.",
                    "Claro: https://track.example.com/{order}. También recibirá un SMS cuando salga a reparto.",
                    "¡De nada! Escríbanos aquí si necesita algo más.",
                ],
            },
            Topic {
                customer: [
                    "¿Todavía puedo cambiar la dirección de entrega del pedido #{order}?",
                    "La nueva dirección es Av. Reforma 250, depto. 8, Ciudad de México.",
                    "Perfecto, gracias.",
                ],
                reply: [
                    "Sí, aún no se ha enviado. ¿Cuál es la nueva dirección?",
                    "Listo: el pedido #{order} irá a Av. Reforma 250, depto. 8. La fecha de entrega no cambia.",
                    "Con gusto. ¡Que tenga un buen día!",
                ],
            },
            Topic {
                customer: [
                    "La chaqueta que recibí me queda chica. ¿Cómo la devuelvo?",
                    "¿Tengo que pagar el envío de la devolución?",
                    "Genial, la llevo mañana a la paquetería.",
                ],
                reply: [
                    "Sin problema: tiene 30 días para devolverla. Le acabo de enviar por correo una etiqueta prepagada para el pedido #{order}.",
                    "No, la devolución es gratuita. El reembolso llega a su tarjeta en 5 días hábiles desde que recibimos el paquete.",
                    "Perfecto. Le avisamos en cuanto llegue.",
                ],
            },
            Topic {
                customer: [
                    "La app se cierra cada vez que intento pagar.",
                    "Un Motorola G84, versión 4.2.1.",
                    "La actualicé y el pago pasó. ¡Gracias!",
                ],
                reply: [
                    "¡Lo sentimos! ¿Qué teléfono y qué versión de la app usa?",
                    "Gracias. La versión 4.2.2 corrige un error al pagar: actualícela desde Google Play y vuelva a intentarlo.",
                    "¡Qué bien! Su pedido #{order} está confirmado.",
                ],
            },
            Topic {
                customer: [
                    "¿Me pueden enviar la factura de mi última compra?",
                    "Tiene que ir a nombre de mi empresa, Nopal Studio S.A. de C.V.",
                    "Recibida, ¡gracias!",
                ],
                reply: [
                    "¡Claro! ¿Es la factura del pedido #{order}? Se la puedo mandar al correo de su cuenta.",
                    "Hecho: la factura del pedido #{order} está a nombre de Nopal Studio y ya va camino a su correo.",
                    "Para servirle. ¡Buen día!",
                ],
            },
            Topic {
                customer: [
                    "Quisiera agendar una prueba de talla esta semana.",
                    "El jueves a las 10 me viene bien.",
                    "¡Nos vemos el jueves!",
                ],
                reply: [
                    "Tenemos el jueves a las 10:00 o el viernes a las 15:30. ¿Cuál prefiere?",
                    "Agendado: jueves a las 10:00 en la tienda de Polanco. Le enviaremos un recordatorio un día antes.",
                    "¡Hasta entonces!",
                ],
            },
        ],
        middle: [
            ("¿Alguna novedad?", "Sigo revisándolo con el almacén; le respondo en menos de una hora."),
            ("Perdón, otra pregunta: ¿entregan los sábados?", "Sí, entregamos los sábados en la mayoría de las zonas con un pequeño cargo."),
            ("Les mandé una foto, ¿les llegó?", "Sí, nos llegó, gracias. Nos ayuda mucho."),
            ("Ok, espero.", "¡Gracias por su paciencia!"),
        ],
        templates: [
            "¡Hola! Damos seguimiento a su solicitud #{order}. Responda este mensaje para continuar la conversación.",
            "Su solicitud #{order} ha sido resuelta. Responda este mensaje si necesita algo más.",
        ],
    },
    Language {
        code: "de",
        topics: [
            Topic {
                customer: [
                    "Hallo, wo bleibt meine Bestellung #{order}? Sie sollte gestern ankommen.",
                    "Können Sie mir den Sendungslink schicken?",
                    "Alles klar, vielen Dank!",
                ],
                reply: [
                    "Entschuldigen Sie die Wartezeit! Bestellung #{order} hat unser Lager am Montag verlassen; der Paketdienst liefert voraussichtlich morgen bis 18 Uhr.",
                    "Gern: https://track.example.com/{order}. Sie bekommen außerdem eine SMS, sobald das Paket in Zustellung ist.",
                    "Gern geschehen! Schreiben Sie uns einfach hier, wenn noch etwas ist.",
                ],
            },
            Topic {
                customer: [
                    "Kann ich die Lieferadresse für Bestellung #{order} noch ändern?",
                    "Die neue Adresse ist Bergmannstraße 12, 10961 Berlin.",
                    "Perfekt, danke.",
                ],
                reply: [
                    "Ja, sie ist noch nicht verschickt. Wie lautet die neue Adresse?",
                    "Erledigt: Bestellung #{order} geht an Bergmannstraße 12, 10961 Berlin. Der Liefertermin bleibt gleich.",
                    "Gern geholfen. Einen schönen Tag noch!",
                ],
            },
            Topic {
                customer: [
                    "Die Jacke ist mir zu klein. Wie schicke ich sie zurück?",
                    "Muss ich den Rückversand bezahlen?",
                    "Super, ich bringe sie morgen zur Post.",
                ],
                reply: [
                    "Kein Problem: Sie haben 30 Tage Zeit. Ich habe Ihnen gerade ein frankiertes Rücksendeetikett für Bestellung #{order} gemailt.",
                    "Nein, die Rücksendung ist kostenlos. Die Erstattung ist innerhalb von 5 Werktagen nach Eingang auf Ihrer Karte.",
                    "Prima. Wir melden uns, sobald das Paket da ist.",
                ],
            },
            Topic {
                customer: [
                    "Die App stürzt jedes Mal beim Bezahlen ab.",
                    "Pixel 7, App-Version 4.2.1.",
                    "Aktualisiert, jetzt hat die Zahlung geklappt. Danke!",
                ],
                reply: [
                    "Das tut uns leid! Welches Handy und welche App-Version nutzen Sie?",
                    "Danke. Version 4.2.2 behebt einen Absturz beim Bezahlen: bitte im Play Store aktualisieren und noch einmal versuchen.",
                    "Schön zu hören! Ihre Bestellung #{order} ist bestätigt.",
                ],
            },
            Topic {
                customer: [
                    "Können Sie mir die Rechnung für meine letzte Bestellung schicken?",
                    "Sie muss auf meine Firma ausgestellt sein, Nordlicht GmbH.",
                    "Ist angekommen, danke!",
                ],
                reply: [
                    "Gern! Geht es um Bestellung #{order}? Ich schicke sie an die E-Mail-Adresse Ihres Kontos.",
                    "Erledigt: Die Rechnung für Bestellung #{order} ist auf die Nordlicht GmbH ausgestellt und unterwegs in Ihr Postfach.",
                    "Jederzeit. Schönen Tag noch!",
                ],
            },
            Topic {
                customer: [
                    "Ich würde gern diese Woche einen Anprobetermin vereinbaren.",
                    "Donnerstag um 10 passt mir.",
                    "Bis Donnerstag!",
                ],
                reply: [
                    "Frei sind Donnerstag um 10:00 oder Freitag um 15:30. Was passt Ihnen besser?",
                    "Gebucht: Donnerstag um 10:00 in unserer Filiale in der Schildergasse. Sie bekommen am Vortag eine Erinnerung.",
                    "Bis dann!",
                ],
            },
        ],
        middle: [
            ("Gibt es schon etwas Neues?", "Ich kläre das gerade mit dem Lager und melde mich innerhalb einer Stunde."),
            ("Noch eine Frage: Liefern Sie auch samstags?", "Ja, in den meisten Regionen gegen einen kleinen Aufpreis."),
            ("Ich habe Ihnen ein Foto geschickt, ist es angekommen?", "Ja, danke, das hilft uns sehr."),
            ("Okay, ich warte.", "Danke für Ihre Geduld!"),
        ],
        templates: [
            "Hallo! Wir melden uns zu Ihrer Anfrage #{order}. Antworten Sie auf diese Nachricht, um das Gespräch fortzusetzen.",
            "Ihre Anfrage #{order} ist erledigt. Antworten Sie auf diese Nachricht, wenn Sie noch etwas brauchen.",
        ],
    },
];

/// One row of the `s_lines` table the generator joins on: (language, topic, turn, customer?, text).
/// Turns 0–2 are the topic's own; turns 3.. are the middle exchanges, the same for every topic.
/// Templates are topic -1: turn 0 the follow-up, turn 1 the closing notice.
pub(super) fn rows() -> Vec<(String, i32, i32, bool, String)> {
    let mut out = Vec::new();
    for lang in &LANGUAGES {
        for (t, topic) in lang.topics.iter().enumerate() {
            let t = t as i32;
            for turn in 0..3 {
                out.push((lang.code.to_owned(), t, turn as i32, true, topic.customer[turn].to_owned()));
                out.push((lang.code.to_owned(), t, turn as i32, false, topic.reply[turn].to_owned()));
            }
            for (i, (c, r)) in lang.middle.iter().enumerate() {
                out.push((lang.code.to_owned(), t, 3 + i as i32, true, (*c).to_owned()));
                out.push((lang.code.to_owned(), t, 3 + i as i32, false, (*r).to_owned()));
            }
        }
        for (i, text) in lang.templates.iter().enumerate() {
            out.push((lang.code.to_owned(), -1, i as i32, false, (*text).to_owned()));
        }
    }
    out
}

#[cfg(test)]
#[path = "conversations_tests.rs"]
mod tests;
